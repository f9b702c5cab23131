//! LLDP and DCBX in captures: an LLDPDU decoded ([`decode`]) into its decoded form
//! ([`model`]).

pub mod decode;
pub mod model;
