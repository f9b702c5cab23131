//! Names are data, not paths: a scenario's node, group, flow and workload names (and its
//! own) are refused at load time unless they are 1 to 64 ASCII letters, digits, `_` and `-`;
//! and the sinks that build file names or VCD scopes from node names escape whatever names a
//! configuration built otherwise holds, so no file is created outside the output directory.

use std::path::Path;

use lossless_proto::units::Duration;
use lossless_sim::Simulator;
use lossless_sim::config::SimConfig;
use lossless_sim::scenario::{MAX_NAME_LEN, Overrides, load_str};
use lossless_sim::trace::pcap::PcapSink;
use lossless_sim::trace::vcd::VcdSink;
use lossless_testkit::temp_dir;

/// Two hosts on a switch, `a` sending to `b`; `{H}` and `{F}` are the first host's and the
/// flow's names.
const BASE: &str = "name = \"n\"\nduration = \"5us\"\n[defaults]\nrate = \"100G\"\n\
[[host]]\nname = \"{H}\"\n[[host]]\nname = \"b\"\n[[switch]]\nname = \"s\"\nbuffer_bytes = 1000000\n\
[[link]]\na = \"{H}\"\nb = \"s\"\n[[link]]\na = \"b\"\nb = \"s\"\n\
[[flow]]\nname = \"{F}\"\nsrc = \"{H}\"\ndst = \"b\"\npriority = 3\n";

fn scenario(host: &str, flow: &str) -> String {
    BASE.replace("{H}", host).replace("{F}", flow)
}

fn load(text: &str) -> Result<SimConfig, lossless_sim::scenario::ScenarioError> {
    load_str(text, "n.toml", None, &Overrides::default())
}

#[test]
fn node_and_flow_names_outside_the_character_set_are_refused_with_line_and_key() {
    load(&scenario("a", "f")).unwrap();
    let long = "x".repeat(MAX_NAME_LEN + 1);
    for bad in [
        "../x",
        "a/b",
        "..",
        ".",
        "a b",
        "",
        "tab\\there",
        "new\\nline",
        "é",
        long.as_str(),
    ] {
        // as a host's name: refused at the [[host]] entry's `name`
        let e = load(&scenario(bad, "f")).unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (6, "key `name`: "), "{bad:?}: {e}");
        assert!(
            e.message.contains("ASCII letters, digits, `_` and `-`"),
            "{bad:?}: {e}"
        );
        // as a flow's name
        let e = load(&scenario("a", bad)).unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (19, "key `name`: "), "{bad:?}: {e}");
    }
    let e = load(&scenario("a", "f").replace("name = \"s\"", "name = \"s/1\"")).unwrap_err();
    assert_eq!(e.line, 10, "a switch's name: {e}");
    let e =
        load(&scenario("a", "f").replacen("name = \"n\"", "name = \"n\\n$enddefinitions\"", 1)).unwrap_err();
    assert_eq!(
        (e.line, e.key.as_str()),
        (1, "key `name`: "),
        "the scenario's name: {e}"
    );
    let e = load(&scenario("a", "f").replacen("\n", "\ndescription = \"two\\nlines\"\n", 1)).unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (2, "key `description`: "), "{e}");
    // a group's name too (its members are the name and a number)
    let e = load(&scenario("a", "f").replace("name = \"b\"", "name = \"../b\"\ncount = 2")).unwrap_err();
    assert_eq!(e.line, 8, "{e}");
    // and the host group a [fabric] generates
    let fabric = "name = \"f\"\nduration = \"1us\"\n[fabric]\nkind = \"leaf-spine\"\nleaves = 1\nspines = 1\n\
                  hosts_per_leaf = 2\nhost_rate = \"100G\"\nhosts = \"../h\"\n[fabric.switch]\nbuffer_bytes = 1000000\n";
    let e = load(fabric).unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (9, "key `hosts`: "), "{e}");
}

#[test]
fn a_set_option_cannot_bring_a_bad_name_in() {
    let ov = Overrides {
        set: vec!["name=\"../../x\"".into()],
        ..Default::default()
    };
    let e = load_str(&scenario("a", "f"), "n.toml", None, &ov).unwrap_err();
    assert!(e.message.contains("\"../../x\""), "{e}");
}

/// Every file and directory under `root`, relative to it.
fn tree(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            out.push(p.strip_prefix(root).unwrap().display().to_string());
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn no_capture_file_is_created_outside_the_output_directory_whatever_the_names() {
    let hostile = [
        "../escape",
        "/tmp/lossless-absolute",
        "..",
        "a/../../b",
        "x\n$enddefinitions $end",
        "",
    ];
    for (i, name) in hostile.iter().enumerate() {
        let root = temp_dir("names-pcap");
        let out = root.join("out");
        // a valid scenario, then the names a library caller may put in a configuration
        let mut c = load(&scenario("a", "f")).unwrap();
        c.nodes[0].name = (*name).to_string();
        c.nodes[2].name = hostile[(i + 1) % hostile.len()].to_string();
        c.duration = Duration::from_us(2);
        let sink = PcapSink::create(&out, &c).unwrap();
        let mut sim = Simulator::with_observer(c, sink).unwrap();
        sim.run();
        let files = sim.observer_mut().finish().unwrap();
        assert_eq!(files.len(), 4, "{name:?}");
        let t = tree(&root);
        assert_eq!(t[0], "out", "{name:?}: {t:?}");
        assert_eq!(t.len(), 5, "{name:?}: only the four captures, in out/: {t:?}");
        for f in &t[1..] {
            let rel = Path::new(f);
            assert_eq!(rel.parent(), Some(Path::new("out")), "{name:?}: {f}");
            assert!(f.ends_with(".pcapng"), "{f}");
        }
        assert!(!Path::new("/tmp/lossless-absolute.0-to-s.pcapng").exists());
    }
}

#[test]
fn a_vcd_scope_is_one_word_whatever_the_node_name() {
    let mut c = load(&scenario("a", "f")).unwrap();
    c.nodes[0].name = "x $end\n$enddefinitions $end\n#5".into();
    let sink = VcdSink::new(&c, Vec::new()).unwrap();
    let text = String::from_utf8(sink.into_inner()).unwrap();
    assert_eq!(text.matches("$enddefinitions").count(), 1, "{text}");
    let scopes: Vec<&str> = text.lines().filter(|l| l.starts_with("$scope module")).collect();
    assert_eq!(scopes.len(), 5, "sim and four ports: {scopes:?}");
    for s in scopes {
        assert_eq!(s.split(' ').count(), 4, "{s:?}");
    }
}
