//! The pathology built-ins and what each must show in a one-simulator report before a split
//! run of it (threads, MPI ranks) is compared with it: a split run that matches proves
//! something only where the mechanism acted.

/// Each pathology built-in and the marks its JSON report must hold: a quoted `"key": value`
/// text that must occur, or a bare key that must have a value other than 0, `null`, `false`
/// or `[]` somewhere:
/// - storm: a stalled receiver's pause storm over every tier, reported by the detector;
/// - storm-nic: the NIC's storm prevention stops the pause;
/// - storm-pfcwd: pfcwd detects storms and drops;
/// - deadlock-ring: static routes close a loop; the detector stops the run on the deadlock;
/// - deadlock-bounce: a link goes down with frames on it, routes are installed, a deadlock;
/// - four-bridge: victim accounting finds blocked time off the flows' paths.
pub const PATHOLOGY_BUILTINS: [(&str, &[&str]); 6] = [
    ("storm", &["\"kind\": \"storm\""]),
    ("storm-nic", &["pause_stopped_at_ps"]),
    ("storm-pfcwd", &["storms_detected_total", "tx_dropped_frames"]),
    (
        "deadlock-ring",
        &["\"kind\": \"deadlock\"", "ended_by_deadlock_at_ps"],
    ),
    (
        "deadlock-bounce",
        &["\"kind\": \"deadlock\"", "\"reason\": \"link_down\""],
    ),
    ("four-bridge", &["off_path_blocked_ps"]),
];

/// The DCBX built-ins and the marks their JSON reports must hold (as in
/// [`PATHOLOGY_BUILTINS`]):
/// - dcbx-adopt: willing hosts adopt the switch's PFC and ETS (from the peer's LLDPDUs);
/// - dcbx-disagree: both ends unwilling, PFC not operational on a link, and the drops it costs.
pub const DCBX_BUILTINS: [(&str, &[&str]); 2] = [
    (
        "dcbx-adopt",
        &[
            "\"pfc_source\": \"peer\"",
            "\"ets_source\": \"peer\"",
            "lldp_sent_frames",
        ],
    ),
    (
        "dcbx-disagree",
        &[
            "pfc_not_operational_reason",
            "local_pfc_not_operational_drops_frames",
        ],
    ),
];

/// How many lines of `json` have the key `key` with a value other than 0, `null`, `false`
/// or `[]`.
pub fn fired(json: &str, key: &str) -> usize {
    json.lines()
        .map(str::trim)
        .filter(|l| l.starts_with(&format!("\"{key}\": ")))
        .filter(|l| {
            let v = l.split_once(": ").map_or("", |x| x.1).trim_end_matches(',');
            !matches!(v, "0" | "null" | "[]" | "false")
        })
        .count()
}

/// Panics unless the report `json` of built-in `name` holds every one of `marks` (see
/// [`PATHOLOGY_BUILTINS`]).
pub fn assert_acted(name: &str, json: &str, marks: &[&str]) {
    for m in marks {
        let acted = if m.starts_with('"') {
            json.matches(m).count()
        } else {
            fired(json, m)
        };
        assert!(acted > 0, "{name}: {m} never happened in the one-simulator run");
    }
}
