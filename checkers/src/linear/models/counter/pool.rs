//! The adds of unknown outcome a counter's sweep holds in reserve: counted by delta (adds of
//! one delta are interchangeable once called), and the ways to take a given sum from them.

use crate::ideal::Sum;

/// Delta classes the sweep tells apart; a key with more distinct deltas among its adds of
/// unknown outcome goes to the generic search.
pub const MAX_CLASSES: usize = 16;

/// A count per delta class.
pub type Counts = [u32; MAX_CLASSES];

/// One way to take a sum from the reserve: how many adds of each class.
pub type Take = Counts;

/// The ways to take exactly `rest` from the reserve `avail` (counts per class of `deltas`),
/// at least one add if `nonempty`. Each way is passed to `take`. Only ways that no other way
/// beats are given: a way that takes at least as many of every class as another leaves the
/// reserve poorer for nothing. Returns `true` when the list may miss such a way (more than
/// one class of either sign is available: then the takes of at most `most` adds are given,
/// or failing those, when `most` is not 0, one per pair of classes).
pub fn takes(
    rest: Sum,
    nonempty: bool,
    deltas: &[i64],
    avail: &Counts,
    most: u32,
    mut take: impl FnMut(&Take),
) -> bool {
    if rest == 0 && !nonempty {
        take(&[0; MAX_CLASSES]);
        return false;
    }
    let partial = ambiguous(deltas, avail);
    if most == 0 && partial {
        // Guessing with no take allowed: nothing to give, and the list is partial.
        return true;
    }
    let one = |c: Option<usize>| c.map(|c| (c, Sum::from(deltas[c]), avail[c]));
    if !partial {
        // At most one class of each sign: the take of fewest adds beats every other, and a
        // nonempty take of nothing, from the class of 0, differs from it.
        let first =
            |sign: fn(i64) -> bool| (0..deltas.len()).find(|&c| avail[c] > 0 && sign(deltas[c]));
        if let Some(z) = first(|d| d == 0).filter(|_| rest == 0) {
            let mut t = [0; MAX_CLASSES];
            t[z] = 1;
            take(&t);
        }
        if let Some(t) = fewest(one(first(|d| d > 0)), one(first(|d| d < 0)), rest) {
            take(&t);
        }
        return false;
    }
    let present = |sign: fn(i64) -> bool| {
        (0..deltas.len())
            .filter(|&c| avail[c] > 0 && sign(deltas[c]))
            .collect::<Vec<_>>()
    };
    let (up, down) = (present(|d| d > 0), present(|d| d < 0));
    let mut given: Vec<Take> = Vec::new();
    if rest == 0 {
        // A nonempty take of nothing: it makes an absent counter exist.
        if let Some(&z) = present(|d| d == 0).first() {
            let mut t = [0; MAX_CLASSES];
            t[z] = 1;
            given.push(t);
        }
    }
    // Many classes: the takes of fewest adds (up to `most`), else one per pair of classes.
    let classes: Vec<usize> = up.iter().chain(&down).copied().collect();
    let mut t = [0; MAX_CLASSES];
    few(&classes, deltas, avail, rest, most, &mut t, &mut |t| {
        given.push(*t)
    });
    if given.is_empty() && most > 0 {
        for u in up.iter().copied().map(Some).chain([None]) {
            for d in down.iter().copied().map(Some).chain([None]) {
                given.extend(fewest(one(u), one(d), rest));
            }
        }
    }
    let mut seen: Vec<Take> = Vec::with_capacity(given.len());
    for t in given {
        if !seen.contains(&t) {
            take(&t);
            seen.push(t);
        }
    }
    partial
}

/// Whether `deltas` hold at most one value of each sign: then the take of fewest adds beats
/// every other, and the takes are exact.
pub fn one_per_sign(deltas: impl Iterator<Item = i64> + Clone) -> bool {
    deltas.clone().filter(|&d| d > 0).count() <= 1 && deltas.filter(|&d| d < 0).count() <= 1
}

/// Whether the reserve `avail` holds more than one class of either sign: then the takes
/// `takes` gives are guesses.
pub fn ambiguous(deltas: &[i64], avail: &Counts) -> bool {
    !one_per_sign(
        deltas
            .iter()
            .zip(avail)
            .filter(|(_, &a)| a > 0)
            .map(|(&d, _)| d),
    )
}

/// Takes of at most `left` adds from `classes` (in order, each class at most its
/// availability) that sum to `rest`, each passed to `found`, fewest adds first.
fn few(
    classes: &[usize],
    deltas: &[i64],
    avail: &Counts,
    rest: Sum,
    left: u32,
    t: &mut Take,
    found: &mut dyn FnMut(&Take),
) {
    for size in 1..=left {
        exactly(classes, deltas, avail, rest, size, t, found);
    }
}

/// Takes of exactly `size` adds, from `classes` onwards.
fn exactly(
    classes: &[usize],
    deltas: &[i64],
    avail: &Counts,
    rest: Sum,
    size: u32,
    t: &mut Take,
    found: &mut dyn FnMut(&Take),
) {
    if size == 0 {
        if rest == 0 {
            found(t);
        }
        return;
    }
    for (i, &c) in classes.iter().enumerate() {
        if t[c] < avail[c] {
            t[c] += 1;
            exactly(
                &classes[i..],
                deltas,
                avail,
                rest - Sum::from(deltas[c]),
                size - 1,
                t,
                found,
            );
            t[c] -= 1;
        }
    }
}

/// The take of fewest adds reaching `rest` from at most one class going up and one going
/// down, each `(class, delta, available)`, if any; nonempty when `rest` is 0. Every other
/// take from the two classes takes more of both (they differ by multiples of the smallest
/// zero-sum pair), so this one beats them all.
fn fewest(
    up: Option<(usize, Sum, u32)>,
    down: Option<(usize, Sum, u32)>,
    rest: Sum,
) -> Option<Take> {
    let mut t = [0; MAX_CLASSES];
    let (a, b) = match (up, down) {
        (None, None) => return None,
        (Some((_, p, _)), None) => (exact_multiple(rest, p)?, 0),
        (None, Some((_, n, _))) => (0, exact_multiple(rest, n)?),
        (Some((_, p, _)), Some((_, n, _))) => {
            let m = -n;
            let g = gcd(p, m);
            if rest % g != 0 {
                return None;
            }
            let period = m / g;
            // The least a ≥ 0 with a·p ≡ rest (mod m).
            let a0 = ((rest / g) % period * inverse(p / g, period)).rem_euclid(period);
            // Enough adds up for the sum to reach `rest` (b ≥ 0), and at least one add.
            let need = if rest > 0 { (rest + p - 1) / p } else { 0 };
            let mut a = a0 + (need - a0).max(0).div_euclid(period) * period;
            while a < need || (a == 0 && rest == 0) {
                a += period;
            }
            (a, (a * p - rest) / m)
        }
    };
    for (side, count) in [(up, a), (down, b)] {
        if let Some((c, _, avail)) = side {
            if count > Sum::from(avail) {
                return None;
            }
            t[c] = count as u32;
        }
    }
    Some(t)
}

/// `rest / d` when it is a whole number of at least 1.
fn exact_multiple(rest: Sum, d: Sum) -> Option<Sum> {
    (rest != 0 && rest % d == 0 && rest / d > 0).then(|| rest / d)
}

fn gcd(a: Sum, b: Sum) -> Sum {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

/// The inverse of `a` modulo `m` (`a` and `m` coprime; 0 when `m` is 1).
fn inverse(a: Sum, m: Sum) -> Sum {
    let (mut r0, mut r1, mut s0, mut s1) = (a.rem_euclid(m), m, 1, 0);
    while r1 != 0 {
        let q = r0 / r1;
        (r0, r1) = (r1, r0 - q * r1);
        (s0, s1) = (s1, s0 - q * s1);
    }
    s0.rem_euclid(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(rest: Sum, nonempty: bool, deltas: &[i64], avail: &[u32]) -> (Vec<Vec<u32>>, bool) {
        most(rest, nonempty, deltas, avail, 3)
    }

    fn most(
        rest: Sum,
        nonempty: bool,
        deltas: &[i64],
        avail: &[u32],
        most: u32,
    ) -> (Vec<Vec<u32>>, bool) {
        let mut counts = [0; MAX_CLASSES];
        counts[..avail.len()].copy_from_slice(avail);
        let mut out = Vec::new();
        let partial = takes(rest, nonempty, deltas, &counts, most, |t| {
            out.push(t[..deltas.len()].to_vec())
        });
        (out, partial)
    }

    #[test]
    fn one_class_each_way_gives_the_single_fewest_take() {
        // 3a - 2b = 4: a = 2, b = 1 is the fewest (a = 4, b = 4 next).
        assert_eq!(all(4, false, &[3, -2], &[9, 9]), (vec![vec![2, 1]], false));
        // -1: a = 1, b = 2.
        assert_eq!(all(-1, false, &[3, -2], &[9, 9]), (vec![vec![1, 2]], false));
        // Not enough of the class going down.
        assert_eq!(all(-1, false, &[3, -2], &[9, 1]), (vec![], false));
        // Nothing to take, or a nonempty take of nothing.
        assert_eq!(all(0, false, &[3, -2], &[9, 9]), (vec![vec![0, 0]], false));
        assert_eq!(all(0, true, &[3, -2], &[9, 9]), (vec![vec![2, 3]], false));
        assert_eq!(all(0, true, &[0, 1], &[1, 4]), (vec![vec![1, 0]], false));
        // Parity: even deltas never make an odd sum.
        assert_eq!(all(5, false, &[4, -2], &[9, 9]), (vec![], false));
        assert_eq!(all(6, false, &[2], &[3]), (vec![vec![3]], false));
        assert_eq!(all(8, false, &[2], &[3]), (vec![], false));
    }

    #[test]
    fn more_classes_give_candidates_and_say_the_list_may_be_partial() {
        let (takes, partial) = all(3, false, &[1, 3, -1], &[5, 1, 5]);
        assert!(partial);
        // Taking none at all is a guess too; the exact cases ignore the limit.
        assert_eq!(most(3, false, &[1, 3, -1], &[5, 1, 5], 0), (vec![], true));
        assert_eq!(
            most(0, false, &[1, 3, -1], &[5, 1, 5], 0),
            (vec![vec![0, 0, 0]], false)
        );
        assert_eq!(
            most(4, false, &[3, -2], &[9, 9], 0),
            (vec![vec![2, 1]], false)
        );
        assert!(takes.contains(&vec![0, 1, 0]) && takes.contains(&vec![3, 0, 0]));
    }
}
