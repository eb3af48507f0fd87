//! Every SPEC.md shape and host variant, and every named rejection.

use mediaparse_extractor_threads::Threads;
use mediaparse_sdk::Extractor;

/// (input, expected id, expected canonical URL)
const ACCEPTED: &[(&str, &str, &str)] = &[
    // /@{user}/post/{shortcode} on both hosts, www or not; the id is the decoded pk
    (
        "https://www.threads.net/@zuck/post/DHV7vTivqWD",
        "3591039013441414531",
        "https://www.threads.com/@zuck/post/DHV7vTivqWD",
    ),
    (
        "https://threads.net/@natgeo/post/C8CTu0iswgv",
        "3387356650132408367",
        "https://www.threads.com/@natgeo/post/C8CTu0iswgv",
    ),
    (
        "https://www.threads.com/@natgeo/post/C8CTu0iswgv",
        "3387356650132408367",
        "https://www.threads.com/@natgeo/post/C8CTu0iswgv",
    ),
    (
        "https://threads.com/@discoverocean/post/CuVdfsNtmvh/",
        "3140546036288089057",
        "https://www.threads.com/@discoverocean/post/CuVdfsNtmvh",
    ),
    (
        "http://www.threads.net/@natgeo/post/C8CTu0iswgv",
        "3387356650132408367",
        "https://www.threads.com/@natgeo/post/C8CTu0iswgv",
    ),
    (
        "HTTPS://WWW.THREADS.COM/@natgeo/post/C8CTu0iswgv",
        "3387356650132408367",
        "https://www.threads.com/@natgeo/post/C8CTu0iswgv",
    ),
    // optional query string and /media suffix
    (
        "https://www.threads.net/@natgeo/post/C8CTu0iswgv?xmt=AQGzKx9&slof=1",
        "3387356650132408367",
        "https://www.threads.com/@natgeo/post/C8CTu0iswgv",
    ),
    (
        "https://www.threads.com/@natgeo/post/C8CTu0iswgv?igshid=NTc4MTIwNjQ2YQ==",
        "3387356650132408367",
        "https://www.threads.com/@natgeo/post/C8CTu0iswgv",
    ),
    (
        "https://www.threads.com/@discoverocean/post/CuVdfsNtmvh/media",
        "3140546036288089057",
        "https://www.threads.com/@discoverocean/post/CuVdfsNtmvh",
    ),
    (
        "https://www.threads.net/@discoverocean/post/CuVdfsNtmvh/media/?hl=en",
        "3140546036288089057",
        "https://www.threads.com/@discoverocean/post/CuVdfsNtmvh",
    ),
    // usernames with dots and underscores, percent-encoding
    (
        "https://www.threads.com/@earthrise.studio/post/C8FN7wUI6nJ",
        "3388175575597427145",
        "https://www.threads.com/@earthrise.studio/post/C8FN7wUI6nJ",
    ),
    (
        "https://www.threads.com/%40eddieexplores_/post/C8CV4ptMMqT",
        "3387366121785051795",
        "https://www.threads.com/@eddieexplores_/post/C8CV4ptMMqT",
    ),
    (
        "https://www.threads.com/@lifeofmili/post/C8D0tYIImQH#replies",
        "3387783161414050823",
        "https://www.threads.com/@lifeofmili/post/C8D0tYIImQH",
    ),
    // replies are /post/ URLs too
    (
        "https://www.threads.net/@lifeofmili/post/C8D0tYIImQH",
        "3387783161414050823",
        "https://www.threads.com/@lifeofmili/post/C8D0tYIImQH",
    ),
    // legacy /t/{code} permalinks (2023 shares): a post without its author's name
    (
        "https://www.threads.net/t/CuXFPIeLLod",
        "3141002295235099165",
        "https://www.threads.com/t/CuXFPIeLLod",
    ),
    (
        "https://threads.net/t/CuXFPIeLLod/?igshid=NTc4MTIwNjQ2YQ==",
        "3141002295235099165",
        "https://www.threads.com/t/CuXFPIeLLod",
    ),
    (
        "https://www.threads.com/t/C8CTu0iswgv/",
        "3387356650132408367",
        "https://www.threads.com/t/C8CTu0iswgv",
    ),
    // share links: the id is the share code until resolved (never decoded)
    (
        "https://www.threads.com/share/BAd-r4UCHz/",
        "BAd-r4UCHz",
        "https://www.threads.com/share/BAd-r4UCHz/",
    ),
    (
        "https://www.threads.net/share/BAZU1LA0-D",
        "BAZU1LA0-D",
        "https://www.threads.com/share/BAZU1LA0-D/",
    ),
    (
        "https://threads.com/share/BAd-r4UCHz?igsh=abc",
        "BAd-r4UCHz",
        "https://www.threads.com/share/BAd-r4UCHz/",
    ),
    // private posts' long codes are recognised (answered unavailable in plan)
    (
        "https://www.threads.com/@someone/post/C5_A1TQNPrYw4c2g9KAUTPUl8RVHqiAdAcOOSY0",
        "3350400310592207576",
        "https://www.threads.com/@someone/post/C5_A1TQNPrYw4c2g9KAUTPUl8RVHqiAdAcOOSY0",
    ),
    // inside surrounding text
    (
        "see https://www.threads.net/@zuck/post/DHV7vTivqWD, wow",
        "3591039013441414531",
        "https://www.threads.com/@zuck/post/DHV7vTivqWD",
    ),
];

const REJECTED: &[&str] = &[
    // profiles and their tabs (the profile's /media tab is not the post's /media suffix)
    "https://www.threads.net/@zuck",
    "https://www.threads.com/@zuck/",
    "https://www.threads.com/@zuck/replies",
    "https://www.threads.com/@zuck/reposts",
    "https://www.threads.com/@zuck/media",
    // feeds, search, activity, compose
    "https://www.threads.com/",
    "https://www.threads.com/search?q=ocean",
    "https://www.threads.com/for_you",
    "https://www.threads.com/following",
    "https://www.threads.com/activity",
    "https://www.threads.com/intent/post?text=hi",
    // shapes that are not accepted
    "https://www.threads.com/p/C8CTu0iswgv",
    "https://www.threads.com/zuck/post/DHV7vTivqWD",
    "https://www.threads.com/@zuck/post/",
    "https://www.threads.com/@zuck/post/abc",
    "https://www.threads.com/@zuck/post/DHV7vTivqWD/replies",
    "https://www.threads.com/share/",
    "https://www.threads.com/t/",
    "https://www.threads.com/t/abc",
    "https://www.threads.com/t/CuXFPIeLLod/replies",
    "https://m.threads.com/@zuck/post/DHV7vTivqWD",
    "https://www.instagram.com/p/CAnqPB-Jzcj/",
    "barcelona://media?shortcode=DHV7vTivqWD",
];

#[test]
fn accepted_shapes() {
    let mut failures = Vec::new();
    for (input, id, canonical) in ACCEPTED {
        match Threads::detect(input) {
            Ok(t) if t.id == *id && t.canonical_url == *canonical && t.platform == "threads" => {}
            other => failures.push(format!("{input}: {other:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn rejections_are_302() {
    let mut failures = Vec::new();
    for input in REJECTED {
        match Threads::detect(input) {
            Err(f) if f.code() == "302" => {}
            other => failures.push(format!("{input}: {other:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn declared_hosts_cover_accepted_inputs() {
    let info = Threads::info();
    for (input, _, _) in ACCEPTED {
        let url = mediaparse_sdk::share::first_url(input).unwrap();
        let host = mediaparse_sdk::urls::InputUrl::parse(&url).unwrap().host;
        assert!(
            info.url_hosts
                .iter()
                .any(|p| mediaparse_sdk::urls::host_matches(&host, p)),
            "{host} not declared"
        );
    }
}

/// Every URL above, and hostile variants of each, end in a target or a
/// failure, never a panic.
#[test]
fn detect_never_panics() {
    let urls = ACCEPTED.iter().map(|a| a.0).chain(REJECTED.iter().copied());
    mediaparse_sdk::testing::assert_detect_survives::<Threads>(urls);
}
