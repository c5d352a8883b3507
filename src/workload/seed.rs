//! Seeds: every seed a run or soak stores or shows is at most 2^53 − 1, so that it survives
//! JSON readers that hold numbers as doubles (JavaScript, jq) exactly.

/// The largest seed: 2^53 − 1, the largest integer a double holds exactly.
pub const MAX_SEED: u64 = (1 << 53) - 1;

/// Parses a `--seed` flag, refusing seeds above [`MAX_SEED`].
pub fn parse(s: &str) -> Result<u64, String> {
    let seed: u64 = s
        .parse()
        .map_err(|e| format!("`{s}` is not a seed (a whole number from 0): {e}"))?;
    if seed > MAX_SEED {
        return Err(format!(
            "{seed} is above the largest seed, 2^53 - 1 = {MAX_SEED}, which JSON readers keep exactly"
        ));
    }
    Ok(seed)
}

/// A random seed for a run or soak given none.
pub fn random() -> u64 {
    rand::random::<u64>() & MAX_SEED
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_up_to_two_to_the_53_minus_one_parse_and_larger_ones_are_refused() {
        assert_eq!(parse("9007199254740991"), Ok(MAX_SEED));
        assert!(parse("9007199254740992").is_err());
        assert!(parse("18446744073709551615").is_err());
        assert!(parse("-1").is_err());
        assert!((0..1000).all(|_| random() <= MAX_SEED));
        // A seed at the limit survives a trip through a double, as JSON readers make it.
        assert_eq!(MAX_SEED as f64 as u64, MAX_SEED);
    }
}
