//! Whether this replica leads: reconciles run only while it holds the
//! Lease, renewed in time. A Lease another replica took, or one not
//! renewed within the renew deadline (two thirds of its duration, as
//! client-go's leader election keeps its renew deadline under the
//! Lease's duration: the API server unreachable), stops reconciling
//! until it is held again, so that two replicas never reconcile at once.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The leadership of this replica.
#[derive(Debug)]
pub struct Leadership {
    /// When the Lease was last taken or renewed (`None`: not held).
    renewed: Mutex<Option<Instant>>,
    /// How long after a renewal it counts as held.
    deadline: Duration,
    /// Always leading (tests that drive reconciles by hand).
    always: bool,
}

impl Leadership {
    /// Not leading yet, for a Lease of `lease_duration`.
    pub fn new(lease_duration: Duration) -> Self {
        Self {
            renewed: Mutex::new(None),
            deadline: lease_duration * 2 / 3,
            always: false,
        }
    }

    /// Always leading: no Lease (one replica, or tests).
    pub fn always() -> Self {
        Self {
            renewed: Mutex::new(None),
            deadline: Duration::ZERO,
            always: true,
        }
    }

    fn renewed(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        self.renewed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The Lease was taken or renewed at `at`.
    pub fn held(&self, at: Instant) {
        *self.renewed() = Some(at);
    }

    /// Another replica holds the Lease.
    pub fn lost(&self) {
        *self.renewed() = None;
    }

    /// Whether this replica leads at `at`.
    pub fn leads_at(&self, at: Instant) -> bool {
        self.always
            || self
                .renewed()
                .is_some_and(|r| at.saturating_duration_since(r) < self.deadline)
    }

    /// Whether this replica leads now.
    pub fn leads(&self) -> bool {
        self.leads_at(Instant::now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[rstest::rstest]
    #[case::just_renewed(0, true)]
    #[case::within_the_deadline(9, true)]
    #[case::past_the_renew_deadline(10, false)]
    #[case::expired(20, false)]
    fn a_lease_not_renewed_in_time_stops_leading(#[case] after: u64, #[case] leads: bool) {
        let l = Leadership::new(Duration::from_secs(15));
        let t = Instant::now();
        assert!(!l.leads_at(t), "not before it is taken");
        l.held(t);
        assert_eq!(l.leads_at(t + Duration::from_secs(after)), leads);
    }

    #[test]
    fn a_lost_lease_stops_leading_until_it_is_held_again() {
        let l = Leadership::new(Duration::from_secs(15));
        let t = Instant::now();
        l.held(t);
        assert!(l.leads_at(t));
        l.lost();
        assert!(!l.leads_at(t));
        l.held(t + Duration::from_secs(1));
        assert!(l.leads_at(t + Duration::from_secs(2)));
        assert!(Leadership::always().leads());
    }
}
