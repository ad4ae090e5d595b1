//! Instance order across seeds: a cyclic Latin square, so over as many seeds
//! as a family has instances every instance appears once at every position
//! (a learning curve is then not one easy instance that happened to come last).

/// The order of `n` instances for `seed`: position `p` holds instance `(p + seed) mod n`.
pub fn latin_order(n: usize, seed: usize) -> Vec<usize> {
    (0..n)
        .map(|position| (position + seed) % n.max(1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_instance_takes_every_position_once_over_n_seeds() {
        for n in 1..=7 {
            let rows: Vec<Vec<usize>> = (0..n).map(|seed| latin_order(n, seed)).collect();
            for row in &rows {
                let mut sorted = row.clone();
                sorted.sort_unstable();
                assert_eq!(
                    sorted,
                    (0..n).collect::<Vec<_>>(),
                    "each row is a permutation"
                );
            }
            for position in 0..n {
                let mut column: Vec<usize> = rows.iter().map(|r| r[position]).collect();
                column.sort_unstable();
                assert_eq!(
                    column,
                    (0..n).collect::<Vec<_>>(),
                    "position {position} of {n}"
                );
            }
        }
    }
}
