//! Output files of the command line: checked before any work starts (each can be created
//! where it is asked for, and no two options name the same file), and written atomically —
//! into a temporary file beside the target, then renamed over it — so that a crash, a full
//! disk or a second Ctrl-C never leaves a truncated file that looks whole.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// One output a command was asked to write: the option that named it, its path, and
/// whether it is a directory (`--out DIR`) or a file.
#[derive(Clone, Debug)]
pub struct Output<'a> {
    pub option: &'a str,
    pub path: &'a Path,
    pub dir: bool,
}

impl<'a> Output<'a> {
    pub fn file(option: &'a str, path: &'a Path) -> Output<'a> {
        Output {
            option,
            path,
            dir: false,
        }
    }

    pub fn dir(option: &'a str, path: &'a Path) -> Output<'a> {
        Output {
            option,
            path,
            dir: true,
        }
    }
}

/// `path` made absolute and free of `.` and `..`, with the part of it that exists resolved
/// through symbolic links: two spellings of one file come out the same.
fn normal(path: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    // The longest existing prefix, resolved; the rest appended as written.
    let mut rest = Vec::new();
    let mut head = out.clone();
    loop {
        if let Ok(c) = head.canonicalize() {
            let mut p = c;
            for r in rest.iter().rev() {
                p.push(r);
            }
            return p;
        }
        match (head.file_name().map(|f| f.to_os_string()), head.parent()) {
            (Some(f), Some(parent)) => {
                rest.push(f);
                head = parent.to_path_buf();
            }
            _ => return out,
        }
    }
}

/// The nearest existing directory at or above `path` (`path` itself only if `dir`), or an
/// error naming the part of the way that is not a directory.
fn existing_dir(path: &Path, dir: bool) -> Result<PathBuf, String> {
    let start = if dir { Some(path) } else { path.parent() };
    for a in start.into_iter().flat_map(Path::ancestors) {
        let a = if a.as_os_str().is_empty() {
            Path::new(".")
        } else {
            a
        };
        if a.exists() {
            if !a.is_dir() {
                return Err(format!(
                    "{}: cannot be written: {} is not a directory",
                    path.display(),
                    a.display()
                ));
            }
            return Ok(a.to_path_buf());
        }
    }
    Ok(PathBuf::from("."))
}

/// Fails now, before any simulation, where an output could not be written at the end: a
/// file that is a directory (a directory that is a file), a path through a file, a
/// directory where no file can be created (`/proc`, one without write permission), or two
/// outputs naming one file.
pub fn check(outs: &[Output]) -> Result<(), String> {
    for o in outs {
        let p = o.path;
        if p.as_os_str().is_empty() {
            return Err(format!("{}: an empty path", o.option));
        }
        if p.exists() && p.is_dir() != o.dir {
            return Err(format!(
                "{} {}: {}",
                o.option,
                p.display(),
                if o.dir {
                    "is a file; give a directory"
                } else {
                    "is a directory; give a file name"
                }
            ));
        }
        let dir = existing_dir(p, o.dir).map_err(|e| format!("{} {e}", o.option))?;
        // A file can be created there: made and removed at once (what the write will do, in
        // the same directory or one it creates below it).
        let probe = dir.join(format!(".reef-probe-{}", std::process::id()));
        match std::fs::File::create(&probe) {
            Ok(_) => {
                let _ = std::fs::remove_file(&probe);
            }
            Err(e) => {
                return Err(format!(
                    "{} {}: cannot be written: no file can be created in {}: {e}",
                    o.option,
                    p.display(),
                    dir.display()
                ));
            }
        }
    }
    for (i, a) in outs.iter().enumerate() {
        let na = normal(a.path);
        for b in &outs[..i] {
            let nb = normal(b.path);
            if na == nb {
                return Err(format!(
                    "{} {} and {} {} name the same {}: one would overwrite the other",
                    b.option,
                    b.path.display(),
                    a.option,
                    a.path.display(),
                    if a.dir || b.dir { "path" } else { "file" }
                ));
            }
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` atomically: into a temporary file in the same directory (made,
/// with its parents, if it does not exist), flushed to disk, then renamed over `path`. A
/// reader sees the old file or the whole new one, never a part.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => {
            std::fs::create_dir_all(d)?;
            d.to_path_buf()
        }
        None => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "no file name"))?;
    let tmp = dir.join(format!(".{}.{}.tmp", name.to_string_lossy(), std::process::id()));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("reef-output-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn writes_whole_files_and_leaves_no_temporary() {
        let d = tmp("write");
        let f = d.join("sub/out.json");
        write(&f, b"first, longer text").unwrap();
        write(&f, b"second").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"second");
        let names: Vec<_> = std::fs::read_dir(d.join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.json")]);
        // A write that cannot finish (the target is a directory) leaves the old state and no
        // temporary file behind.
        let target = d.join("sub/adir");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("keep"), b"x").unwrap();
        assert!(write(&target, b"new").is_err());
        assert!(target.is_dir());
        assert_eq!(std::fs::read_dir(d.join("sub")).unwrap().count(), 2);
    }

    #[test]
    fn two_names_for_one_file_are_refused() {
        let d = tmp("same");
        let a = d.join("x.json");
        let b = d.join("sub/../x.json");
        let e = check(&[Output::file("--json", &a), Output::file("--svg", &b)]).unwrap_err();
        assert!(
            e.contains("--json") && e.contains("--svg") && e.contains("same file"),
            "{e}"
        );
        let c = d.join("y.svg");
        check(&[Output::file("--json", &a), Output::file("--svg", &c)]).unwrap();
        // (A file inside an output directory is taken: `--out d --json d/x.json` is how the
        // reproductions are run.)
        check(&[Output::dir("--out", &d), Output::file("--json", &a)]).unwrap();
        let n = d.join("new");
        let e = check(&[Output::dir("--out", &n), Output::file("--json", &n)]).unwrap_err();
        assert!(e.contains("same path"), "{e}");
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_place_where_nothing_can_be_created_is_refused() {
        let e = check(&[Output::file("--json", Path::new("/proc/x.json"))]).unwrap_err();
        assert!(e.contains("cannot be written") && e.contains("/proc"), "{e}");
        let d = tmp("file");
        let f = d.join("f");
        std::fs::write(&f, b"").unwrap();
        let e = check(&[Output::file("--json", &f.join("out.json"))]).unwrap_err();
        assert!(e.contains("is not a directory"), "{e}");
        let e = check(&[Output::dir("--out", &f)]).unwrap_err();
        assert!(e.contains("is a file"), "{e}");
    }
}
