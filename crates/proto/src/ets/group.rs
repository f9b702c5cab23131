//! The deficit core: weighted byte-fair sharing among up to eight members (classes of the
//! ETS group, or priorities inside one class).
//!
//! It is deficit round robin with a one-byte quantum. Every member keeps a deficit counter;
//! for each byte the group sends, every active member is credited its weight and the sender is
//! debited the total active weight, so the counters always sum to (nearly) zero and a member's
//! counter divided by the total weight is exactly how many bytes it is owed (positive) or
//! has had in advance (negative). The active member owed the most sends next. Classic DRR
//! with a quantum of at least one maximum frame per member serves a whole quantum in a burst,
//! so with weights such as 1/99 its error over a window of 1,000 jumbo frames is about 10 %;
//! here the error of any member over any interval stays within about two maximum frames.
//!
//! Cost: selection and charging each touch at most eight counters (a fixed bound, no loop
//! over frames or rounds); no allocation.
//!
//! Members of weight 0 form a lower tier: they share equally (weight 1 each) and are served
//! only when no member of positive weight is active, like mlx5's zero-bandwidth ETS TCs.

/// Weighted byte-fair sharing among up to eight members.
#[derive(Clone, Debug)]
pub(crate) struct WeightedGroup {
    /// Weight of each member inside its tier: its configured weight, or 1 in the lower tier.
    tier_weight: [i64; 8],
    /// Deficit counter of each member, in byte × weight units.
    credit: [i64; 8],
    /// Members that may be served now (ready and not paused).
    active: u8,
    /// Members of positive weight.
    upper: u8,
    /// Members of the group (positive or zero weight).
    members: u8,
}

impl WeightedGroup {
    /// A group whose members are the bits of `members`, with the given weights.
    pub(crate) fn new(members: u8, weight: [u32; 8]) -> Self {
        let mut upper = 0;
        for (m, w) in weight.iter().enumerate() {
            if members & (1 << m) != 0 && *w > 0 {
                upper |= 1 << m;
            }
        }
        let mut tier_weight = [1i64; 8];
        for (m, w) in tier_weight.iter_mut().enumerate() {
            if upper & (1 << m) != 0 {
                *w = i64::from(weight[m]);
            }
        }
        WeightedGroup {
            tier_weight,
            credit: [0; 8],
            active: 0,
            upper,
            members,
        }
    }

    /// The tier (mask of members) that member `m` belongs to.
    #[inline]
    fn tier_of(&self, m: usize) -> u8 {
        if self.upper & (1 << m) != 0 {
            self.upper
        } else {
            self.members & !self.upper
        }
    }

    /// Active members.
    #[inline]
    pub(crate) fn active(&self) -> u8 {
        self.active
    }

    /// Sets the active members. Leaving members forget their counter (as DRR forgets the
    /// deficit of a queue that empties); the remaining counters of each tier are scaled to the
    /// tier's new active weight (so each still owes or is owed the same bytes), then shifted
    /// together so that they sum to less than the member count, and joiners start at 0,
    /// which is then the mean: a joiner is neither owed nor in debt.
    pub(crate) fn set_active(&mut self, active: u8) {
        let active = active & self.members;
        if active == self.active {
            return;
        }
        let stay = active & self.active;
        if stay == 0 {
            // nobody stays (a lone queue filling or emptying, the common case): every
            // counter starts from 0
            self.credit = [0; 8];
            self.active = active;
            return;
        }
        for tier in [self.upper, self.members & !self.upper] {
            // a counter over its tier's active weight is the bytes owed: when that total
            // changes, scale the stayers' counters so that what each is owed stays the same
            // (without it, a class owed a few frames among weights 8/85/3/1 is owed 24 times
            // as many bytes once only weights 3/1 remain)
            let (old_w, new_w) = (self.weight_of(self.active & tier), self.weight_of(active & tier));
            if old_w != new_w && old_w != 0 {
                for m in bits(stay & tier) {
                    let scaled = i128::from(self.credit[m]) * i128::from(new_w) / i128::from(old_w);
                    self.credit[m] = scaled.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
                }
            }
            self.recentre(stay & tier);
        }
        // leavers and joiners start from 0; a non-member's counter is never touched (`charge`
        // skips non-members), so it is 0 already and clearing it changes nothing
        for (m, c) in self.credit.iter_mut().enumerate() {
            if stay & (1 << m) == 0 {
                *c = 0;
            }
        }
        self.active = active;
    }

    /// Sum of the tier weights of `mask`'s members.
    #[inline]
    fn weight_of(&self, mask: u8) -> i64 {
        bits(mask).map(|m| self.tier_weight[m]).sum()
    }

    /// Shifts the counters of `stayers` (one tier) together so that they sum to less than
    /// their count (a lone stayer's counter becomes 0).
    #[inline]
    fn recentre(&mut self, stayers: u8) {
        match stayers.count_ones() {
            0 => {}
            1 => self.credit[stayers.trailing_zeros() as usize] = 0,
            n => {
                let mut sum: i64 = 0;
                for m in bits(stayers) {
                    sum += self.credit[m];
                }
                let shift = sum.div_euclid(i64::from(n));
                for m in bits(stayers) {
                    self.credit[m] -= shift;
                }
            }
        }
    }

    /// The active member to serve next: the upper tier if any of it is active, then the
    /// member owed the most; ties go to the higher member number.
    #[inline]
    pub(crate) fn pick(&self) -> Option<u8> {
        let tier = if self.active & self.upper != 0 {
            self.active & self.upper
        } else {
            self.active
        };
        let mut best: Option<(i64, u8)> = None;
        for m in bits(tier) {
            let c = self.credit[m];
            match best {
                Some((bc, _)) if bc > c => {}
                _ => best = Some((c, m as u8)),
            }
        }
        best.map(|(_, m)| m)
    }

    /// Accounts `bytes` sent by member `m`: every active member of its tier is credited its
    /// weight per byte and `m` is debited the tier's total active weight per byte.
    #[inline]
    pub(crate) fn charge(&mut self, m: u8, bytes: u64) {
        let m = usize::from(m & 7);
        if self.members & (1 << m) == 0 {
            return;
        }
        let tier = self.tier_of(m) & (self.active | 1 << m);
        let b = bytes as i64;
        let mut total: i64 = 0;
        for i in bits(tier) {
            let w = self.tier_weight[i];
            total += w;
            self.credit[i] += b * w;
        }
        self.credit[m] -= b * total;
    }

    /// The deficit counter of member `m` (tests and diagnostics).
    #[cfg(test)]
    pub(crate) fn credit(&self, m: usize) -> i64 {
        self.credit[m]
    }
}

/// Indices of the set bits of `mask`, lowest first.
#[inline]
pub(crate) fn bits(mask: u8) -> impl Iterator<Item = usize> {
    let mut m = mask;
    core::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(i)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(g: &mut WeightedGroup, sizes: &[u64], n: usize) -> [u64; 8] {
        let mut sent = [0u64; 8];
        for k in 0..n {
            let m = g.pick().unwrap();
            let b = sizes[k % sizes.len()];
            g.charge(m, b);
            sent[m as usize] += b;
        }
        sent
    }

    #[test]
    fn shares_follow_weights_with_mixed_sizes() {
        let mut g = WeightedGroup::new(0b111, [7, 13, 80, 0, 0, 0, 0, 0]);
        g.set_active(0b111);
        let sent = run(&mut g, &[64, 9216, 1500, 333, 9000, 64], 30_000);
        let total: u64 = sent.iter().sum();
        for (m, w) in [(0, 7.0), (1, 13.0), (2, 80.0)] {
            let share = sent[m] as f64 / total as f64 * 100.0;
            assert!((share - w).abs() < 0.05, "member {m}: {share}% for weight {w}");
        }
    }

    #[test]
    fn counters_stay_within_two_frames_of_fair() {
        let mut g = WeightedGroup::new(0xff, [1, 2, 3, 5, 8, 13, 21, 47]);
        g.set_active(0xff);
        for k in 0..50_000u64 {
            let m = g.pick().unwrap();
            g.charge(m, 64 + (k * 7919) % 9153);
            for i in 0..8 {
                assert!(
                    g.credit(i).abs() <= 2 * 9216 * 100,
                    "credit {i} = {}",
                    g.credit(i)
                );
            }
        }
    }

    #[test]
    fn zero_weight_members_wait_for_the_upper_tier() {
        let mut g = WeightedGroup::new(0b111, [0, 50, 50, 0, 0, 0, 0, 0]);
        g.set_active(0b111);
        let sent = run(&mut g, &[1000], 100);
        assert_eq!(sent[0], 0);
        g.set_active(0b001);
        assert_eq!(g.pick(), Some(0));
    }

    #[test]
    fn a_joiner_is_neither_owed_nor_in_debt() {
        let mut g = WeightedGroup::new(0b11, [50, 50, 0, 0, 0, 0, 0, 0]);
        g.set_active(0b01);
        run(&mut g, &[9216], 1000);
        g.set_active(0b11);
        let sent = run(&mut g, &[1000], 1000);
        assert_eq!(sent[0], sent[1]);
    }
}
