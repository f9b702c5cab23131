//! Headroom verification: the worst case the simulator can make for one lossless port pair
//! ([`worst_case`]) and the bisection that finds the smallest headroom with zero drops in it
//! ([`verify`]), behind `lossless headroom --verify`. The defaults it checks live in
//! [`crate::config::headroom`].

pub mod verify;
pub mod worst_case;
