//! The data path in frame order: a host's NIC port, the port's transmitter and MAC flow
//! control, the link, the switch (routing, buffer admission and release), the routes.

pub(in crate::sim) mod host;
pub(in crate::sim) mod link;
pub(in crate::sim) mod mac;
pub(in crate::sim) mod port;
pub(crate) mod ring;
pub(in crate::sim) mod routes;
pub(in crate::sim) mod switch;
