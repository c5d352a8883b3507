//! The bursts a counter's sweep tries: of each group of equal open adds, only those that end
//! first.

use crate::ideal::Sum;

/// Every burst from `order` (free adds sorted by delta, optional, end) that takes of each
/// group of equal adds (same delta, both optional or both not) the ones ending first: as
/// `(slot bits, sum)`; with `want`, only those whose sum is `want` (`reach[i]`: the most the
/// adds from `i` on can add and take away). Taking a later add of a group instead leaves a
/// configuration this one beats (the earlier one must take effect sooner), so no other
/// burst matters.
pub fn prefixes(
    order: &[(i64, bool, u64, u8)],
    reach: &[(Sum, Sum)],
    want: Option<Sum>,
    mask: u64,
    sum: Sum,
    skipped: bool,
    found: &mut Vec<(u64, Sum)>,
) {
    if let Some(w) = want {
        let (up, down) = reach[0];
        if w - sum > up || w - sum < down {
            return;
        }
    }
    let Some((&(delta, optional, _, slot), rest)) = order.split_first() else {
        found.push((mask, sum));
        return;
    };
    let same_group = rest
        .first()
        .is_some_and(|&(d, o, _, _)| (d, o) == (delta, optional));
    // Skipping this one skips the rest of its group.
    prefixes(rest, &reach[1..], want, mask, sum, same_group, found);
    if !skipped {
        let (mask, sum) = (mask | 1 << slot, sum + Sum::from(delta));
        prefixes(rest, &reach[1..], want, mask, sum, false, found);
    }
}
