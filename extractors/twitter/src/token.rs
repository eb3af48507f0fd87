//! The syndication token (guide section 3, strategy B): `(id / 1e15) * π`
//! written in base 36 the way JavaScript's `Number.prototype.toString(36)`
//! does, with every `0` and the `.` removed.

const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";

/// The token for a post id (digits). JavaScript first turns the id string
/// into a double, so ids above 2^53 round the same way here.
pub fn syndication_token(id: &str) -> String {
    let n: f64 = id.parse().unwrap_or(0.0);
    radix_string(n / 1e15 * std::f64::consts::PI, 36)
        .chars()
        .filter(|c| *c != '0' && *c != '.')
        .collect()
}

/// The next representable double above a positive finite `x`.
fn next_up(x: f64) -> f64 {
    if x == 0.0 {
        return f64::from_bits(1);
    }
    f64::from_bits(x.to_bits() + 1)
}

/// JavaScript's `Number.prototype.toString(radix)` for a finite,
/// non-negative double: integer digits, then fraction digits only as far
/// as the double's own precision reaches (rounding half to even, with
/// carry), as ECMAScript engines print them.
pub fn radix_string(value: f64, radix: u32) -> String {
    if !value.is_finite() || value < 0.0 || !(2..=36).contains(&radix) {
        return String::new();
    }
    let r = f64::from(radix);
    let mut integer = value.floor();
    let mut fraction = value - integer;
    let mut delta = (0.5 * (next_up(value) - value)).max(next_up(0.0));
    let mut frac_digits: Vec<u8> = Vec::new();
    if fraction >= delta {
        loop {
            fraction *= r;
            delta *= r;
            let digit = (fraction as u32).min(radix - 1);
            frac_digits.push(digit as u8);
            fraction -= f64::from(digit);
            if (fraction > 0.5 || (fraction == 0.5 && digit & 1 == 1)) && fraction + delta > 1.0 {
                // Round up, propagating the carry through written digits.
                loop {
                    match frac_digits.pop() {
                        None => {
                            integer += 1.0;
                            break;
                        }
                        Some(d) if u32::from(d) + 1 < radix => {
                            frac_digits.push(d + 1);
                            break;
                        }
                        Some(_) => {}
                    }
                }
                break;
            }
            if fraction < delta {
                break;
            }
        }
    }
    let mut int_digits: Vec<u8> = Vec::new();
    // Digits beyond the double's precision are written as zeros.
    while integer / r >= 9_007_199_254_740_992.0 {
        integer /= r;
        int_digits.push(b'0');
    }
    loop {
        let remainder = integer % r;
        int_digits.push(DIGITS[remainder as usize]);
        integer = (integer - remainder) / r;
        if integer <= 0.0 {
            break;
        }
    }
    int_digits.reverse();
    let mut out = String::from_utf8(int_digits).unwrap_or_default();
    if !frac_digits.is_empty() {
        out.push('.');
        out.extend(frac_digits.iter().map(|d| DIGITS[*d as usize] as char));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guide_test_vectors() {
        for (id, token) in [
            ("1841206275088290279", "4gobiuxs3yx"),
            ("1848831595014459513", "4hc9xdp8g2s"),
            ("1697304622749086011", "4448mpm2au"),
            ("1964084223871971826", "4recoxg3yfh"),
            ("20", "6dq1a2xwd93"),
        ] {
            assert_eq!(syndication_token(id), token, "{id}");
        }
    }

    #[test]
    fn radix_matches_javascript() {
        // Values checked against a JavaScript engine.
        assert_eq!(radix_string(0.5, 36), "0.i");
        assert_eq!(radix_string(255.0, 16), "ff");
        assert_eq!(
            radix_string(0.1, 2),
            "0.0001100110011001100110011001100110011001100110011001101"
        );
        assert_eq!(radix_string(35.0, 36), "z");
        assert_eq!(radix_string(0.0, 36), "0");
    }
}
