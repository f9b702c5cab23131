//! Helpers shared by the DCQCN integration tests.

#![allow(dead_code)]

pub mod closed_loop;
pub mod fluid;
pub mod reference;
