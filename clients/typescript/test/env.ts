/**
 * The suite runs against a real mediaparse service in demo mode, started by
 * the end-to-end runner (`cargo xtask test`, tests/tests/e2e/clients.rs),
 * which passes MEDIAPARSE_BASE_URL, MEDIAPARSE_TOKEN (credits, no rate
 * limit), MEDIAPARSE_LIMITED_TOKEN (20 parses a minute), MEDIAPARSE_PARSE_URL
 * (a TikTok photo post the fake upstream serves).
 */
function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run through the end-to-end runner (cargo xtask test)`);
  return value;
}

export const baseUrl = env("MEDIAPARSE_BASE_URL");
export const token = env("MEDIAPARSE_TOKEN");
export const limitedToken = env("MEDIAPARSE_LIMITED_TOKEN");
export const postUrl = env("MEDIAPARSE_PARSE_URL");
export const UNSUPPORTED = "https://example.com/not-a-post";

/** Spend the key's parse quota with unsupported links (free: 400 code 302) until a 429; that answer. */
export async function exhaust(key: string): Promise<Response> {
  for (let i = 0; i < 500; i++) {
    const r = await fetch(`${baseUrl}/api/v1/parse`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ url: UNSUPPORTED }),
    });
    await r.body?.cancel();
    if (r.status === 429) return r;
    if (r.status !== 400) throw new Error(`unexpected ${r.status}`);
  }
  throw new Error("the limited key never answered 429");
}
