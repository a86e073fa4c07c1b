//! Alignment of an expected and an observed packet sequence (one flow) by their longest
//! common subsequence, so that a dropped packet shows as missing and an inserted one as extra
//! instead of shifting every later pair.
//!
//! The common prefix and suffix are matched first; the rest is aligned by dynamic programming
//! when it has at most [`MAX_CELLS`] cells (expected × observed packets), else pairwise by
//! index. Between two matched packets, leftover expected and observed packets are paired in
//! order as "differs" (a corrupted packet), and what remains is missing or extra.

/// Largest middle part (expected × observed packets) aligned by dynamic programming; a larger
/// one (a flow with thousands of packets diverging early and late) is paired by index.
pub const MAX_CELLS: usize = 1 << 22;

/// The alignment of one expected item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pair {
    /// Equal to observed item `j`.
    Equal(usize),
    /// Paired with observed item `j`, which differs.
    Differs(usize),
    /// Not observed.
    Missing,
}

/// The alignment: per expected item its pairing, and the observed items paired with nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alignment {
    /// Per expected item.
    pub expected: Vec<Pair>,
    /// Observed items paired with no expected one, in order.
    pub extra: Vec<usize>,
}

enum Op {
    Match,
    Del,
    Ins,
}

/// Aligns `n` expected with `m` observed items; `eq(i, j)` says whether expected `i` equals
/// observed `j`.
pub fn align(n: usize, m: usize, eq: impl Fn(usize, usize) -> bool) -> Alignment {
    let mut pre = 0;
    while pre < n && pre < m && eq(pre, pre) {
        pre += 1;
    }
    let mut suf = 0;
    while suf < n - pre && suf < m - pre && eq(n - 1 - suf, m - 1 - suf) {
        suf += 1;
    }
    let (a, b) = (n - pre - suf, m - pre - suf);
    let mut ops: Vec<Op> = (0..pre).map(|_| Op::Match).collect();
    if a.saturating_mul(b) <= MAX_CELLS {
        ops.extend(lcs_ops(a, b, |i, j| eq(pre + i, pre + j)));
    } else {
        // Too big to align: pair by index (every pair compared as "differs" or equal).
        for k in 0..a.max(b) {
            if k < a && k < b && eq(pre + k, pre + k) {
                ops.push(Op::Match);
                continue;
            }
            // A Del then an Ins in one run pair up as "differs".
            if k < a {
                ops.push(Op::Del);
            }
            if k < b {
                ops.push(Op::Ins);
            }
        }
    }
    ops.extend((0..suf).map(|_| Op::Match));
    pairs(n, &ops)
}

/// Edit script of the longest common subsequence (dynamic programming over `a × b` cells).
fn lcs_ops(a: usize, b: usize, eq: impl Fn(usize, usize) -> bool) -> Vec<Op> {
    // len[i][j] = LCS length of the suffixes from i and j; row-major, (b + 1) per row.
    let w = b + 1;
    let mut len = vec![0u32; (a + 1) * w];
    for i in (0..a).rev() {
        for j in (0..b).rev() {
            len[i * w + j] = if eq(i, j) {
                len[(i + 1) * w + j + 1] + 1
            } else {
                len[(i + 1) * w + j].max(len[i * w + j + 1])
            };
        }
    }
    let mut ops = Vec::with_capacity(a + b);
    let (mut i, mut j) = (0, 0);
    while i < a || j < b {
        if i < a && j < b && eq(i, j) && len[i * w + j] == len[(i + 1) * w + j + 1] + 1 {
            ops.push(Op::Match);
            i += 1;
            j += 1;
        } else if i < a && (j == b || len[(i + 1) * w + j] >= len[i * w + j + 1]) {
            ops.push(Op::Del);
            i += 1;
        } else {
            ops.push(Op::Ins);
            j += 1;
        }
    }
    ops
}

/// Turns an edit script into pairings: within each run between matches, deletions and
/// insertions pair up in order as "differs"; the rest are missing or extra.
fn pairs(n: usize, ops: &[Op]) -> Alignment {
    let mut out = Alignment {
        expected: Vec::with_capacity(n),
        extra: Vec::new(),
    };
    let (mut j, mut dels, mut inss) = (0usize, Vec::new(), Vec::new());
    let flush = |out: &mut Alignment, dels: &mut Vec<usize>, inss: &mut Vec<usize>| {
        for (k, _) in dels.iter().enumerate() {
            out.expected
                .push(inss.get(k).map_or(Pair::Missing, |&o| Pair::Differs(o)));
        }
        out.extra.extend(inss.iter().skip(dels.len()));
        dels.clear();
        inss.clear();
    };
    let mut i = 0usize;
    for op in ops {
        match op {
            Op::Match => {
                flush(&mut out, &mut dels, &mut inss);
                out.expected.push(Pair::Equal(j));
                i += 1;
                j += 1;
            }
            Op::Del => {
                dels.push(i);
                i += 1;
            }
            Op::Ins => {
                inss.push(j);
                j += 1;
            }
        }
    }
    flush(&mut out, &mut dels, &mut inss);
    out.extra.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(e: &[u32], o: &[u32]) -> Alignment {
        align(e.len(), o.len(), |i, j| e[i] == o[j])
    }

    #[test]
    fn a_dropped_item_is_missing() {
        let a = run(&[1, 2, 3, 4], &[1, 3, 4]);
        assert_eq!(
            a.expected,
            vec![
                Pair::Equal(0),
                Pair::Missing,
                Pair::Equal(1),
                Pair::Equal(2)
            ]
        );
        assert!(a.extra.is_empty());
    }

    #[test]
    fn a_corrupted_item_differs_and_an_inserted_one_is_extra() {
        let a = run(&[1, 2, 3], &[1, 9, 3, 7]);
        assert_eq!(
            a.expected,
            vec![Pair::Equal(0), Pair::Differs(1), Pair::Equal(2)]
        );
        assert_eq!(a.extra, vec![3]);
        let a = run(&[], &[5, 6]);
        assert_eq!(a.extra, vec![0, 1]);
    }

    #[test]
    fn huge_middles_pair_by_index() {
        let n = 3000;
        let e: Vec<u32> = (0..n).collect();
        let mut o: Vec<u32> = (1..=n).collect();
        o.push(0);
        let a = run(&e, &o);
        assert_eq!(a.expected.len(), n as usize);
        assert_eq!(a.expected[0], Pair::Differs(0));
        assert_eq!(a.extra, vec![n as usize]);
    }
}
