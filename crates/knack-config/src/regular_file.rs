//! Opening files that must be regular files. A FIFO, socket or device put
//! where knack expects a file would block an ordinary open or read forever
//! (a FIFO waits for a writer), so the open never waits (`O_NONBLOCK`) and
//! the type is checked on the open handle, before any read.

use std::fs;
use std::io::{self, Read};
use std::path::Path;

/// The error for something that is not a regular file; its text is what
/// users see after the path.
pub fn not_regular() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "not a regular file (a FIFO, socket, device or folder); it was not read",
    )
}

/// Opens `path` (following links) for reading if it is a regular file.
/// A missing file is `ErrorKind::NotFound`, as with `File::open`.
pub fn open(path: &Path) -> io::Result<fs::File> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )?;
    let file = fs::File::from(fd);
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    Ok(file)
}

/// `std::fs::read` for regular files only.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_files_and_refuses_fifos_folders_and_devices_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        fs::write(&file, "hello").unwrap();
        assert_eq!(read(&file).unwrap(), b"hello");
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        for path in [fifo.as_path(), dir.path(), Path::new("/dev/null")] {
            let err = read(path).unwrap_err();
            assert_eq!(
                err.kind(),
                io::ErrorKind::InvalidInput,
                "{}",
                path.display()
            );
        }
        let missing = read(&dir.path().join("missing")).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
    }
}
