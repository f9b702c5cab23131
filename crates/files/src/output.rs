//! Outputs: files renamed into place when complete, standard output, and the one rule for
//! output directories.

use std::fmt;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

/// Why an output could not be written.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", shown(path))]
pub struct OutputError {
    /// The output (its final name, not the temporary one; `-` for standard output).
    pub path: PathBuf,
    /// The operating system's reason.
    pub source: io::Error,
}

/// How an output is named in messages: `-` is "standard output".
fn shown(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "standard output".to_string()
    } else {
        path.display().to_string()
    }
}

/// Whether `e` (one error of a chain) says that the reader of an output went away (a closed
/// pipe, as after `| head -1`): the command then ends quietly, as coreutils do.
pub fn is_broken_pipe(e: &(dyn std::error::Error + 'static)) -> bool {
    if let Some(io) = e.downcast_ref::<io::Error>() {
        return io.kind() == io::ErrorKind::BrokenPipe;
    }
    if let Some(o) = e.downcast_ref::<OutputError>() {
        return o.source.kind() == io::ErrorKind::BrokenPipe;
    }
    false
}

/// Writes `args` to standard output; an error (a closed pipe, a full disk) names standard
/// output instead of panicking as `print!` does.
pub fn print_stdout(args: fmt::Arguments<'_>) -> Result<(), OutputError> {
    io::stdout().lock().write_fmt(args).map_err(|source| OutputError {
        path: PathBuf::from("-"),
        source,
    })
}

/// `name` made safe as a part of a file name: ASCII letters, digits, `_` and `-` stay, every
/// other byte becomes `%XX` (its hexadecimal value), so no `/`, `.`, `..`, space or control
/// character can reach the file system, and two different names never give the same part.
/// A command that builds file names from names it was given (node names in `--pcap DIR`)
/// puts them through this, whatever checks the names passed before.
pub fn name_part(name: &str) -> std::borrow::Cow<'_, str> {
    let keep = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    if !name.is_empty() && name.bytes().all(keep) {
        return std::borrow::Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len() * 3 + 1);
    if name.is_empty() {
        // an empty name is no part at all: spell it so that it still names something
        out.push('%');
    }
    for b in name.bytes() {
        if keep(b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The parent directory of an output, `.` for a bare name.
fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The one rule for where outputs go: the directory an output is created in must exist
/// (lossless creates an output file or directory, never the directories above it, as `cp`,
/// `mkdir` without `-p` and `tshark -w` do).
fn check_parent(path: &Path) -> Result<(), OutputError> {
    let parent = parent_of(path);
    match fs::metadata(&parent) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(OutputError {
            path: path.to_path_buf(),
            source: io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", parent.display()),
            ),
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(OutputError {
            path: path.to_path_buf(),
            source: io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "the directory {} does not exist (outputs are created, the directories above them are not)",
                    parent.display()
                ),
            ),
        }),
        Err(source) => Err(OutputError {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Makes sure the output directory `dir` exists: an existing directory is used as it is, a
/// missing one is created (but not its parents, see the module's rule), anything else is
/// refused.
pub fn create_output_dir(dir: &Path) -> Result<(), OutputError> {
    let err = |source| OutputError {
        path: dir.to_path_buf(),
        source,
    };
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(err(io::Error::new(
            io::ErrorKind::NotADirectory,
            "exists and is not a directory",
        ))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            check_parent(dir)?;
            match fs::create_dir(dir) {
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(err(e)),
                _ => Ok(()),
            }
        }
        Err(e) => Err(err(e)),
    }
}

/// An output file being written: bytes go to a temporary file beside `path`, which
/// [`AtomicFile::commit`] renames to `path`; dropped without a commit, the temporary file is
/// removed and `path` is left as it was.
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    file: Option<File>,
}

impl AtomicFile {
    /// Starts writing `path` (its directory must exist). The temporary file is
    /// `.NAME.PID.N.tmp` in the same directory; it takes the permissions of the file it
    /// replaces.
    pub fn create(path: &Path) -> Result<Self, OutputError> {
        let err = |source| OutputError {
            path: path.to_path_buf(),
            source,
        };
        let name = path
            .file_name()
            .ok_or_else(|| err(io::Error::new(io::ErrorKind::InvalidInput, "not a file name")))?;
        let dir = parent_of(path);
        let mut n = 0u32;
        loop {
            let mut tmp_name = std::ffi::OsString::from(".");
            tmp_name.push(name);
            tmp_name.push(format!(".{}.{n}.tmp", std::process::id()));
            let tmp = dir.join(tmp_name);
            match fs::OpenOptions::new().write(true).create_new(true).open(&tmp) {
                Ok(file) => {
                    let f = AtomicFile {
                        path: path.to_path_buf(),
                        tmp,
                        file: Some(file),
                    };
                    if let Ok(old) = fs::metadata(path)
                        && let Some(file) = &f.file
                    {
                        // best effort: the replaced file's mode (a 0600 file stays 0600)
                        let _ = file.set_permissions(old.permissions());
                    }
                    return Ok(f);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
                Err(e) => return Err(err(e)),
            }
        }
    }

    /// The final name.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes the data to the disk and renames the file into place.
    pub fn commit(self) -> Result<(), OutputError> {
        let mut all = Commit::new();
        all.add_file(self)?;
        all.commit()
    }

    /// Flushes the data to the disk; the file stays beside its final name.
    fn sync(&mut self) -> Result<(), OutputError> {
        let err = |source| OutputError {
            path: self.path.clone(),
            source,
        };
        match &mut self.file {
            Some(f) => f.flush().and_then(|()| f.sync_all()).map_err(err),
            None => Err(err(io::Error::other("output already committed"))),
        }
    }

    /// Writes all of `bytes`, naming the output file on error.
    pub fn write_all_named(&mut self, bytes: &[u8]) -> Result<(), OutputError> {
        self.write_all(bytes).map_err(|source| OutputError {
            path: self.path.clone(),
            source,
        })
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.file {
            Some(f) => f.write(buf),
            None => Err(io::Error::other("output already committed")),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `bytes` to `path` through an [`AtomicFile`].
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let mut f = AtomicFile::create(path)?;
    f.write_all_named(bytes)?;
    f.commit()
}

/// Where an [`Output`]'s bytes go.
enum Sink {
    Stdout(io::Stdout),
    Stderr(io::Stderr),
    /// Not a regular file (`/dev/null`, a FIFO): written in place.
    Direct(File),
    Atomic(AtomicFile),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Stdout(s) => s.write(buf),
            Sink::Stderr(s) => s.write(buf),
            Sink::Direct(f) => f.write(buf),
            Sink::Atomic(f) => f.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Stdout(s) => s.flush(),
            Sink::Stderr(s) => s.flush(),
            Sink::Direct(f) => f.flush(),
            Sink::Atomic(f) => f.flush(),
        }
    }
}

/// (device, inode) of what a standard stream is connected to.
fn std_identity(fd: std::os::fd::BorrowedFd<'_>) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let owned = fd.try_clone_to_owned().ok()?;
    let m = File::from(owned).metadata().ok()?;
    Some((m.dev(), m.ino()))
}

/// Which standard stream, if any, `meta` is (the file behind `/dev/stdout`, or the file
/// standard output was redirected to).
pub(crate) fn standard_stream(meta: &fs::Metadata) -> Option<u8> {
    use std::os::unix::fs::MetadataExt;
    let id = Some((meta.dev(), meta.ino()));
    if id == std_identity(io::stdout().as_fd()) {
        Some(1)
    } else if id == std_identity(io::stderr().as_fd()) {
        Some(2)
    } else {
        None
    }
}

/// An output of a command, buffered: standard output for `-` (or a path that is standard
/// output, such as `/dev/stdout`), written directly when the path exists and is not a
/// regular file (`/dev/null`, a FIFO), else an [`AtomicFile`] renamed into place by
/// [`Output::commit`] (through symbolic links: the file a link points to is replaced, the
/// link stays). Every write error names the output; dropped without a commit, a temporary
/// file is removed.
pub struct Output {
    name: PathBuf,
    sink: BufWriter<Sink>,
}

impl Output {
    /// Opens the output `path` (see [`Output`]); a missing directory above it is an error
    /// (the module's rule), as is a directory.
    pub fn create(path: &Path) -> Result<Output, OutputError> {
        let err = |source| OutputError {
            path: path.to_path_buf(),
            source,
        };
        let sink = if path.as_os_str() == "-" {
            Sink::Stdout(io::stdout())
        } else {
            match fs::metadata(path) {
                Ok(m) => match standard_stream(&m) {
                    Some(1) => Sink::Stdout(io::stdout()),
                    Some(_) => Sink::Stderr(io::stderr()),
                    None if m.is_dir() => {
                        return Err(err(io::Error::new(io::ErrorKind::IsADirectory, "is a directory")));
                    }
                    None if m.is_file() => {
                        // replace the file a symbolic link points to, not the link
                        let target = fs::canonicalize(path).map_err(err)?;
                        Sink::Atomic(AtomicFile::create(&target).map_err(|e| err(e.source))?)
                    }
                    None => Sink::Direct(fs::OpenOptions::new().write(true).open(path).map_err(err)?),
                },
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    check_parent(path)?;
                    Sink::Atomic(AtomicFile::create(path)?)
                }
                Err(e) => return Err(err(e)),
            }
        };
        Ok(Output {
            name: path.to_path_buf(),
            sink: BufWriter::with_capacity(64 << 10, sink),
        })
    }

    /// The output as given (`-` for standard output).
    pub fn path(&self) -> &Path {
        &self.name
    }

    /// Whether this output is the process's standard output.
    pub fn is_stdout(&self) -> bool {
        matches!(self.sink.get_ref(), Sink::Stdout(_))
    }

    /// The error `source` met while writing this output, naming it.
    pub fn error(&self, source: io::Error) -> OutputError {
        OutputError {
            path: self.name.clone(),
            source,
        }
    }

    /// Writes all of `bytes`, naming the output on error.
    pub fn write_all_named(&mut self, bytes: &[u8]) -> Result<(), OutputError> {
        self.sink.write_all(bytes).map_err(|e| self.error(e))
    }

    /// Flushes what is buffered (a streamed output's complete lines reach the file).
    pub fn flush_named(&mut self) -> Result<(), OutputError> {
        self.sink.flush().map_err(|e| self.error(e))
    }

    /// Finishes the output but leaves a file beside its final name: flushes what is
    /// buffered (a full disk or a broken pipe is found now) and syncs a file to the disk.
    /// [`Commit`] then puts it in place together with the run's other outputs.
    pub fn finish(self) -> Result<Staged, OutputError> {
        let name = self.name;
        let sink = self.sink.into_inner().map_err(|e| OutputError {
            path: name.clone(),
            source: e.into_error(),
        })?;
        let err = |source| OutputError {
            path: name.clone(),
            source,
        };
        let file = match sink {
            Sink::Stdout(mut s) => {
                s.flush().map_err(err)?;
                None
            }
            Sink::Stderr(mut s) => {
                s.flush().map_err(err)?;
                None
            }
            Sink::Direct(mut f) => {
                f.flush().map_err(err)?;
                None
            }
            Sink::Atomic(mut f) => {
                f.sync().map_err(|e| err(e.source))?;
                Some(f)
            }
        };
        Ok(Staged { name, file })
    }

    /// Finishes the output: flushes it and, for a file, moves it into place.
    pub fn commit(self) -> Result<(), OutputError> {
        let mut all = Commit::new();
        all.add(self.finish()?);
        all.commit()
    }
}

/// An [`Output`] whose bytes are all written ([`Output::finish`]): a file waits beside its
/// final name for [`Commit::commit`]; standard output, a device or a FIFO has been written
/// already. Dropped without a commit, the waiting file is removed.
pub struct Staged {
    name: PathBuf,
    file: Option<AtomicFile>,
}

impl Staged {
    /// The output as given (`-` for standard output).
    pub fn path(&self) -> &Path {
        &self.name
    }

    /// Whether this output went to the process's standard output or another stream or device
    /// (nothing waits to be put in place).
    pub fn is_written(&self) -> bool {
        self.file.is_none()
    }
}

/// The files of one run, put in place together: all of them, or none. Each file is complete
/// and on the disk before the first rename ([`Output::finish`], [`Commit::add_file`]); a
/// rename that fails puts back the files the earlier renames replaced (from a hard link to
/// each kept until the end) and removes the new ones, so an existing file is either the old
/// one or the complete new one, and no output of a failed run is in place. Dropped without a
/// commit, every waiting file is removed and nothing is replaced.
#[derive(Default)]
pub struct Commit {
    files: Vec<AtomicFile>,
}

impl Commit {
    /// Nothing to put in place yet.
    pub fn new() -> Commit {
        Commit::default()
    }

    /// Adds a finished output (one written directly needs nothing more).
    pub fn add(&mut self, staged: Staged) {
        if let Some(f) = staged.file {
            self.files.push(f);
        }
    }

    /// Adds a file written through an [`AtomicFile`], flushing it to the disk now.
    pub fn add_file(&mut self, mut file: AtomicFile) -> Result<(), OutputError> {
        file.sync()?;
        self.files.push(file);
        Ok(())
    }

    /// Adds the files of `other` (a part of the run's outputs staged on its own).
    pub fn append(&mut self, mut other: Commit) {
        self.files.append(&mut other.files);
    }

    /// How many files wait to be put in place.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether no file waits.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Renames every file into place, or none: the error names the file that could not be
    /// put in place, and the files renamed before it are put back as they were.
    pub fn commit(mut self) -> Result<(), OutputError> {
        // (final name, what it replaced), for each file renamed so far
        let mut done: Vec<(PathBuf, Old)> = Vec::with_capacity(self.files.len());
        let files = std::mem::take(&mut self.files);
        let mut failure = None;
        for mut f in files {
            let old = match keep_old(&f.path) {
                Ok(old) => old,
                Err(source) => {
                    failure = Some(OutputError {
                        path: f.path.clone(),
                        source,
                    });
                    break; // `f` is dropped: its temporary file goes
                }
            };
            match fs::rename(&f.tmp, &f.path) {
                Ok(()) => {
                    f.file = None; // in place: nothing to remove on drop
                    done.push((f.path.clone(), old));
                }
                Err(source) => {
                    if let Old::Kept(b) = old {
                        let _ = fs::remove_file(b);
                    }
                    failure = Some(OutputError {
                        path: f.path.clone(),
                        source,
                    });
                    break;
                }
            }
        }
        let Some(e) = failure else {
            for (_, old) in done {
                if let Old::Kept(b) = old {
                    let _ = fs::remove_file(b);
                }
            }
            return Ok(());
        };
        // undo in reverse order: the old file back, or no file where there was none
        for (path, old) in done.into_iter().rev() {
            match old {
                Old::Kept(b) => {
                    let _ = fs::rename(&b, &path);
                }
                Old::Nothing => {
                    let _ = fs::remove_file(&path);
                }
                Old::Replaced => {}
            }
        }
        Err(e)
    }
}

/// What a rename into place replaces.
enum Old {
    /// No file was there.
    Nothing,
    /// A file, kept through a hard link `.NAME.PID.N.old` beside it until the end.
    Kept(PathBuf),
    /// A file that could not be kept (a file system without hard links): if a later rename
    /// fails, the new, complete file stays.
    Replaced,
}

/// Keeps the regular file `path` names now through a hard link beside it, so that a later
/// failure can put it back.
fn keep_old(path: &Path) -> io::Result<Old> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_file() => {}
        Ok(_) => return Ok(Old::Replaced),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Old::Nothing),
        Err(e) => return Err(e),
    }
    let Some(name) = path.file_name() else {
        return Ok(Old::Replaced);
    };
    let dir = parent_of(path);
    for n in 0..1000u32 {
        let mut b = std::ffi::OsString::from(".");
        b.push(name);
        b.push(format!(".{}.{n}.old", std::process::id()));
        let backup = dir.join(b);
        match fs::hard_link(path, &backup) {
            Ok(()) => return Ok(Old::Kept(backup)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(_) => return Ok(Old::Replaced),
        }
    }
    Ok(Old::Replaced)
}

impl Write for Output {
    /// Writes through the buffer; an error keeps its kind and names the output.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.sink
            .write(buf)
            .map_err(|e| io::Error::new(e.kind(), self.error(e)))
    }
    fn flush(&mut self) -> io::Result<()> {
        self.sink
            .flush()
            .map_err(|e| io::Error::new(e.kind(), self.error(e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{Scratch, mkfifo};

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn an_uncommitted_output_leaves_nothing_and_the_old_file_intact() {
        let d = Scratch::new("atomic");
        let p = d.path().join("out.json");
        fs::write(&p, "old").unwrap();
        {
            let mut f = AtomicFile::create(&p).unwrap();
            f.write_all(b"half").unwrap();
        }
        assert_eq!(fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(names(d.path()), ["out.json"], "temporary file removed");
        write_atomic(&p, b"new").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(names(d.path()), ["out.json"]);
    }

    #[test]
    fn an_output_in_a_missing_directory_names_the_file_and_the_directory() {
        let e = Output::create(Path::new("/nonexistent-dir-lossless/out.json"))
            .err()
            .unwrap();
        assert_eq!(
            e.to_string(),
            "/nonexistent-dir-lossless/out.json: the directory /nonexistent-dir-lossless does \
             not exist (outputs are created, the directories above them are not)"
        );
        let e = create_output_dir(Path::new("/nonexistent-dir-lossless/rpt")).unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
    }

    #[test]
    fn an_output_directory_is_created_once_and_a_file_in_its_place_refused() {
        let d = Scratch::new("outdir");
        let rpt = d.path().join("rpt");
        create_output_dir(&rpt).unwrap();
        create_output_dir(&rpt).unwrap();
        assert!(rpt.is_dir());
        let f = d.path().join("f");
        fs::write(&f, "x").unwrap();
        let e = create_output_dir(&f).unwrap_err();
        assert!(e.to_string().ends_with("exists and is not a directory"), "{e}");
        let e = Output::create(&rpt).err().unwrap();
        assert!(e.to_string().ends_with("is a directory"), "{e}");
    }

    #[test]
    fn an_output_is_in_place_only_after_commit() {
        let d = Scratch::new("output");
        let p = d.path().join("a.json");
        let mut o = Output::create(&p).unwrap();
        o.write_all_named(b"{}\n").unwrap();
        o.flush_named().unwrap();
        assert!(!p.exists(), "not in place before the commit");
        assert_eq!(names(d.path()).len(), 1, "one temporary file");
        o.commit().unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "{}\n");
        assert_eq!(names(d.path()), ["a.json"]);
        // dropped without a commit: the old file stays, no temporary file is left
        let mut o = Output::create(&p).unwrap();
        o.write_all_named(b"half").unwrap();
        drop(o);
        assert_eq!(fs::read_to_string(&p).unwrap(), "{}\n");
        assert_eq!(names(d.path()), ["a.json"]);
    }

    #[test]
    fn a_symbolic_link_keeps_pointing_at_the_replaced_file() {
        let d = Scratch::new("symlink");
        let real = d.path().join("real.json");
        let link = d.path().join("link.json");
        fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let mut o = Output::create(&link).unwrap();
        o.write_all_named(b"new").unwrap();
        o.commit().unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
    }

    #[test]
    fn outputs_that_are_not_regular_files_are_written_directly() {
        let d = Scratch::new("direct");
        let mut o = Output::create(Path::new("/dev/null")).unwrap();
        o.write_all_named(b"x").unwrap();
        o.commit().unwrap();
        assert!(Path::new("/dev/null").exists(), "/dev/null is not replaced");
        let fifo = d.path().join("fifo");
        mkfifo(&fifo);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read_to_string(fifo).unwrap())
        };
        let mut o = Output::create(&fifo).unwrap();
        o.write_all_named(b"through the fifo").unwrap();
        o.commit().unwrap();
        assert_eq!(reader.join().unwrap(), "through the fifo");
        assert_eq!(names(d.path()), ["fifo"], "no temporary file beside a FIFO");
    }

    #[test]
    fn a_full_device_is_an_error_naming_the_output() {
        let mut o = Output::create(Path::new("/dev/full")).unwrap();
        let e = o
            .write_all_named(&[0u8; 100_000])
            .and_then(|()| o.flush_named())
            .unwrap_err();
        assert_eq!(e.source.kind(), io::ErrorKind::StorageFull);
        assert!(e.to_string().starts_with("/dev/full: "), "{e}");
        assert!(!is_broken_pipe(&e));
    }

    #[test]
    fn outputs_committed_together_go_in_place_together() {
        let d = Scratch::new("commit-all");
        let (a, b) = (d.path().join("a.json"), d.path().join("b.vcd"));
        fs::write(&a, "old a").unwrap();
        let mut all = Commit::new();
        for (p, text) in [(&a, "new a"), (&b, "new b")] {
            let mut o = Output::create(p).unwrap();
            o.write_all_named(text.as_bytes()).unwrap();
            all.add(o.finish().unwrap());
        }
        assert_eq!(
            fs::read_to_string(&a).unwrap(),
            "old a",
            "nothing in place before the commit"
        );
        assert!(!b.exists());
        assert_eq!(all.len(), 2);
        all.commit().unwrap();
        assert_eq!(fs::read_to_string(&a).unwrap(), "new a");
        assert_eq!(fs::read_to_string(&b).unwrap(), "new b");
        assert_eq!(
            names(d.path()),
            ["a.json", "b.vcd"],
            "no temporary file or copy left"
        );
    }

    #[test]
    fn an_output_that_fails_to_finish_leaves_every_other_output_as_it_was() {
        let d = Scratch::new("commit-none");
        let a = d.path().join("a.vcd");
        fs::write(&a, "old a").unwrap();
        let mut all = Commit::new();
        let mut o = Output::create(&a).unwrap();
        o.write_all_named(b"new a").unwrap();
        all.add(o.finish().unwrap());
        // `--json /dev/full`: the failure comes when it is finished, before any rename
        let mut full = Output::create(Path::new("/dev/full")).unwrap();
        full.write_all_named(b"{}").unwrap();
        let e = full.finish().err().unwrap();
        assert_eq!(e.source.kind(), io::ErrorKind::StorageFull);
        drop(all);
        assert_eq!(fs::read_to_string(&a).unwrap(), "old a");
        assert_eq!(names(d.path()), ["a.vcd"], "the waiting file is removed");
    }

    #[test]
    fn a_rename_that_fails_puts_back_the_files_renamed_before_it() {
        let d = Scratch::new("commit-undo");
        let (a, b, c) = (d.path().join("a"), d.path().join("b"), d.path().join("c"));
        fs::write(&a, "old a").unwrap();
        let mut all = Commit::new();
        for p in [&a, &b, &c] {
            let mut f = AtomicFile::create(p).unwrap();
            f.write_all_named(b"new").unwrap();
            all.add_file(f).unwrap();
        }
        // c cannot be put in place: a directory took its name meanwhile
        fs::create_dir(&c).unwrap();
        fs::write(c.join("x"), "keeps the directory non-empty").unwrap();
        let e = all.commit().unwrap_err();
        assert_eq!(e.path, c, "{e}");
        assert_eq!(fs::read_to_string(&a).unwrap(), "old a", "a is put back");
        assert!(!b.exists(), "b, new, is removed");
        assert!(c.is_dir());
        assert_eq!(names(d.path()), ["a", "c"], "no temporary file or copy left");
    }

    #[test]
    fn a_name_part_keeps_plain_names_and_escapes_every_other_byte() {
        assert_eq!(name_part("leaf-1_a"), "leaf-1_a");
        assert_eq!(name_part("../x"), "%2E%2E%2Fx");
        assert_eq!(name_part(".."), "%2E%2E");
        assert_eq!(name_part("a b\n"), "a%20b%0A");
        assert_eq!(name_part("é"), "%C3%A9");
        assert_eq!(name_part(""), "%");
        // different names, different parts: `%` itself is escaped
        assert_ne!(name_part("%2E"), name_part("."));
        for n in ["../../etc/passwd", "/abs", "a/b", ".", "x\0y"] {
            let p = name_part(n);
            assert!(
                !p.contains('/') && !p.contains('.') && !p.contains('\0'),
                "{n:?} → {p}"
            );
        }
    }

    #[test]
    fn a_closed_pipe_is_told_apart_from_other_errors() {
        let e = OutputError {
            path: PathBuf::from("-"),
            source: io::Error::from(io::ErrorKind::BrokenPipe),
        };
        assert!(is_broken_pipe(&e));
        assert!(e.to_string().starts_with("standard output: "), "{e}");
        let wrapped = io::Error::new(io::ErrorKind::BrokenPipe, e);
        assert!(is_broken_pipe(&wrapped));
    }
}
