//! Sizes as PVE writes them: `32G`, `512M`, `1.5T` or bytes (pve-common
//! `JSONSchema.pm` `parse_size`, the `disk-size` format of drives).

/// A size in PVE's notation: digits with an optional fraction and an
/// optional unit `K`, `M`, `G` or `T` (powers of 1024), the bytes
/// truncated to a whole number as Perl's `int` does. Anything else
/// (lower-case units, signs, exponents, blanks, `B`/`iB`) is refused, as
/// `m/^(\d+(\.\d+)?)([KMGT])?$/` refuses it; so is a size beyond `u64`.
pub fn parse_size(s: &str) -> Option<u64> {
    let (num, mult) = match s.as_bytes().last()? {
        b'K' => (&s[..s.len() - 1], 1u64 << 10),
        b'M' => (&s[..s.len() - 1], 1 << 20),
        b'G' => (&s[..s.len() - 1], 1 << 30),
        b'T' => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    let (int, frac) = match num.split_once('.') {
        Some((int, frac)) => (int, Some(frac)),
        None => (num, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || frac.is_some_and(|f| !digits(f)) {
        return None;
    }
    let whole = int.parse::<u64>().ok()?.checked_mul(mult)?;
    let part = match frac {
        // `0.<digits>` of a unit, truncated to bytes.
        Some(f) => (format!("0.{f}").parse::<f64>().ok()? * mult as f64) as u64,
        None => 0,
    };
    whole.checked_add(part)
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::parse_size;

    #[rstest]
    #[case("0", Some(0))]
    #[case("1024", Some(1024))]
    #[case("1K", Some(1 << 10))]
    #[case("528K", Some(528 << 10))]
    #[case("4M", Some(4 << 20))]
    #[case("512M", Some(512 << 20))]
    #[case("8G", Some(8 << 30))]
    #[case("32G", Some(32 << 30))]
    #[case("0.5G", Some(512 << 20))]
    #[case("1.5T", Some(3 << 39))]
    #[case("1.1K", Some(1126))]
    #[case("10.0", Some(10))]
    #[case("", None)]
    #[case("G", None)]
    #[case("8g", None)]
    #[case("8k", None)]
    #[case("8GB", None)]
    #[case("8GiB", None)]
    #[case("8 G", None)]
    #[case(" 8G", None)]
    #[case("8P", None)]
    #[case(".5G", None)]
    #[case("5.G", None)]
    #[case("1.5.0G", None)]
    #[case("-1G", None)]
    #[case("+1G", None)]
    #[case("1e3", None)]
    #[case("inf", None)]
    #[case("NaN", None)]
    #[case("99999999999T", None)]
    fn sizes_as_pve_parses_them(#[case] s: &str, #[case] want: Option<u64>) {
        assert_eq!(parse_size(s), want);
    }
}
