//! Live drivers: the same engines on real Linux interfaces, over AF_PACKET sockets.
