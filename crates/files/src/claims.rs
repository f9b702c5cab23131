//! The files a command reads and writes, so that no output overwrites an input or another
//! output.

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Component, Path, PathBuf};

use crate::output::standard_stream;

/// An output that would overwrite an input or another output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{role} {} is the same file as {other_role} {}: refusing to overwrite it", shown(.path), shown(.other))]
pub struct ClashError {
    /// The output refused (its option, e.g. `--vcd`).
    pub role: String,
    /// Its path as given.
    pub path: PathBuf,
    /// The input or output it clashes with (e.g. `the scenario`, `--json`).
    pub other_role: String,
    /// That one's path as given.
    pub other: PathBuf,
}

fn shown(p: &Path) -> String {
    if p.as_os_str() == "-" {
        "- (standard output)".to_string()
    } else {
        p.display().to_string()
    }
}

/// What a path refers to, for comparing.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Identity {
    /// Standard output or standard error (`-`, `/dev/stdout`, the file it is redirected to).
    Std(u8),
    /// A character device such as `/dev/null`: several outputs may share it.
    Shared,
    /// A file, existing (with its device and inode) or to be created.
    File {
        canonical: PathBuf,
        inode: Option<(u64, u64)>,
    },
}

impl Identity {
    fn of(path: &Path) -> Identity {
        if path.as_os_str() == "-" {
            return Identity::Std(1);
        }
        match fs::metadata(path) {
            Ok(m) if m.file_type().is_char_device() => Identity::Shared,
            Ok(m) => match standard_stream(&m) {
                Some(fd) => Identity::Std(fd),
                None => Identity::File {
                    canonical: fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
                    inode: Some((m.dev(), m.ino())),
                },
            },
            Err(_) => Identity::File {
                canonical: resolve(path),
                inode: None,
            },
        }
    }

    fn same(&self, other: &Identity) -> bool {
        match (self, other) {
            (Identity::Shared, _) | (_, Identity::Shared) => false,
            (Identity::Std(a), Identity::Std(b)) => a == b,
            (
                Identity::File {
                    canonical: a,
                    inode: ia,
                },
                Identity::File {
                    canonical: b,
                    inode: ib,
                },
            ) => a == b || (ia.is_some() && ia == ib),
            _ => false,
        }
    }
}

/// The inputs and outputs of one command: [`Claims::output`] refuses an output that is the
/// same file as an input or an earlier output (by canonical path, so `./a` and `a` or a
/// symbolic link are seen through, and by inode, so a hard link is too). Standard output may
/// be claimed once; character devices such as `/dev/null` by any number of outputs.
#[derive(Debug, Default)]
pub struct Claims {
    seen: Vec<(String, PathBuf, Identity, bool)>,
}

impl Claims {
    /// No claims yet.
    pub fn new() -> Claims {
        Claims::default()
    }

    /// Records an input (`role` names it in messages, e.g. "the scenario").
    pub fn input(&mut self, role: &str, path: &Path) {
        if path.as_os_str() == "-" {
            return; // standard input
        }
        self.seen
            .push((role.to_string(), path.to_path_buf(), Identity::of(path), false));
    }

    /// Records an output (`role` names it, e.g. "--json"), refusing one that is the same file
    /// as anything recorded before.
    pub fn output(&mut self, role: &str, path: &Path) -> Result<(), ClashError> {
        let id = Identity::of(path);
        if let Some((other_role, other, _, _)) = self.seen.iter().find(|(_, _, o, _)| o.same(&id)) {
            return Err(ClashError {
                role: role.to_string(),
                path: path.to_path_buf(),
                other_role: other_role.clone(),
                other: other.clone(),
            });
        }
        self.seen.push((role.to_string(), path.to_path_buf(), id, true));
        Ok(())
    }

    /// [`Claims::output`] for every file an output directory will hold (`names` inside
    /// `dir`); `role` names the directory's option.
    pub fn output_dir<'a>(
        &mut self,
        role: &str,
        dir: &Path,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), ClashError> {
        for n in names {
            self.output(role, &dir.join(n))?;
        }
        Ok(())
    }
}

/// The canonical form of a path that may not exist yet: its longest existing ancestor
/// canonicalized (symbolic links resolved), then the rest with `.` dropped and `..` applied
/// (no component of the rest exists, so none is a link).
fn resolve(path: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        match std::env::current_dir() {
            Ok(d) => d.join(path),
            Err(_) => return path.to_path_buf(),
        }
    };
    let mut base = abs.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = fs::canonicalize(base) {
            let mut out = c;
            for comp in rest.iter().rev() {
                match comp {
                    Component::CurDir => {}
                    Component::ParentDir => {
                        out.pop();
                    }
                    c => out.push(c.as_os_str()),
                }
            }
            return out;
        }
        match (base.parent(), base.components().next_back()) {
            (Some(p), Some(last)) => {
                rest.push(last);
                base = p;
            }
            _ => return abs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Scratch;

    #[test]
    fn an_output_that_is_an_input_is_refused_whatever_the_spelling() {
        let d = Scratch::new("claims-input");
        let s = d.path().join("s.toml");
        fs::write(&s, "x").unwrap();
        let mut c = Claims::new();
        c.input("the scenario", &s);
        let dotted = d.path().join(".").join("s.toml");
        let e = c.output("--json", &dotted).unwrap_err();
        assert_eq!(e.other_role, "the scenario");
        assert!(e.to_string().contains("refusing to overwrite it"), "{e}");
        let hard = d.path().join("hard.toml");
        fs::hard_link(&s, &hard).unwrap();
        assert!(c.output("--vcd", &hard).is_err(), "a hard link is the same inode");
        let sym = d.path().join("sym.toml");
        std::os::unix::fs::symlink(&s, &sym).unwrap();
        assert!(
            c.output("--vcd", &sym).is_err(),
            "a symbolic link is seen through"
        );
    }

    #[test]
    fn two_outputs_to_one_new_file_are_refused_but_dev_null_is_shared() {
        let d = Scratch::new("claims-outputs");
        let mut c = Claims::new();
        c.output("--json", &d.path().join("x")).unwrap();
        let e = c.output("--vcd", &d.path().join("new/./../x")).unwrap_err();
        assert_eq!(e.other_role, "--json", "spelled differently, not there yet: {e}");
        c.output("--json", Path::new("/dev/null")).unwrap();
        c.output("--vcd", Path::new("/dev/null")).unwrap();
        c.output("--json", Path::new("-")).unwrap();
        let e = c.output("--vcd", Path::new("-")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--vcd - (standard output) is the same file as --json - (standard output): refusing to overwrite it"
        );
    }

    #[test]
    fn a_file_inside_an_output_directory_is_claimed_by_name() {
        let d = Scratch::new("claims-dir");
        let mut c = Claims::new();
        c.output_dir("--report", &d.path().join("rpt"), ["index.html"])
            .unwrap();
        assert!(c.output("--json", &d.path().join("rpt/other.json")).is_ok());
        // the directory does not exist yet: another spelling is still caught
        assert!(
            c.output("--json", &d.path().join("./rpt/x/../index.html"))
                .is_err()
        );
    }
}
