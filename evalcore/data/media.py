"""An example's image, found and decoded safely, for people to see (the Label page): never a way to read another
file of the server, and never a way to exhaust its memory.

A log names an example's image in its ``image`` column (a path such as ``val/n01440764/x.JPEG``). The image is looked
up in the dataset's zip of images (saved with the dataset in the workspace, :meth:`Workspace.add_media
<evalcore.workspace.Workspace.add_media>`), then under the media folder the instance is given
(``EVALCORE_MEDIA_DIR``). Every step checks what could go wrong, and says so in a :class:`MediaError` naming the
file and what to fix:

- **The name** (:func:`clean_name`): a relative path without ``..`` (which could climb out of the folder), or an
  absolute path inside the media folder; no URL (evalcore reads no network), no NUL byte.
- **The media folder** (:func:`resolve_in_folder`): the name is resolved with its links; a link that leads out of
  the folder is refused, so is anything that is not a plain file (a FIFO would block the reader), and the file is
  opened without following a link swapped in after the check (``O_NOFOLLOW``).
- **A zip of images** (:func:`check_archive`, once, when it is saved): at most ``max_members`` members, their
  stated sizes together at most ``max_archive_bytes``, and no member name that would climb out of a folder
  (``../x.png``, ``/etc/x``: "zip slip"), so that the archive can be unpacked safely by any tool. Members are read
  straight from the zip, never unpacked, each at most ``max_image_bytes`` whatever its header says.
- **The bytes** (:func:`decode_image`): at most ``max_image_bytes``; the format told by the content (PNG, JPEG or
  WebP signatures), never by the file's extension, and Pillow asked to open that format only; width x height at most
  ``max_pixels`` before any pixel is decoded (Pillow's own ``DecompressionBombError`` caught too), so that a small
  file declaring a huge image (a decompression bomb) is refused; the image then shrunk to at most
  :data:`SHOWN_SIDE` pixels a side and re-encoded (PNG where it has transparency, JPEG otherwise), so the browser
  gets a small, freshly written file, never the uploaded bytes.

=================================  ==============================================================  ========
variable                           bound                                                           default
=================================  ==============================================================  ========
``EVALCORE_MEDIA_DIR``             the folder whose files a log's ``image`` column may name         none
``EVALCORE_MEDIA_IMAGE_MB``        bytes of one image file or zip member                           20
``EVALCORE_MEDIA_MEGAPIXELS``      width x height of one image, in millions of pixels               50
``EVALCORE_MEDIA_ZIP_FILES``       members of a zip of images                                      100,000
``EVALCORE_MEDIA_ZIP_MB``          a zip of images: its size and its members' sizes together       2,048
=================================  ==============================================================  ========

50 megapixels holds a 48-megapixel phone photo; decoding one takes at most 200 MB (4 bytes a pixel) for a moment
(a JPEG is decoded at a reduced scale, far less). Pure functions, no Streamlit: the page only shows the bytes.
"""

from __future__ import annotations

import functools
import io
import os
import re
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from evalcore.data.limits import MB, env_number, size_text
from evalcore.errors import EvalDataError

#: the longest side, in pixels, of the image shown (re-encoded at most this large)
SHOWN_SIDE = 1024
#: extensions of the names a log's example id may have for it to be taken as the image's name (ImageNet's
#: ``ILSVRC2012_val_00000293.JPEG``); the format itself is always told by the content
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")
#: the formats shown, by the signature their files start with (Pillow's format names)
_SIGNATURES = (("PNG", re.compile(rb"\A\x89PNG\r\n\x1a\n")), ("JPEG", re.compile(rb"\A\xff\xd8\xff")),
               ("WEBP", re.compile(rb"\ARIFF....WEBP", re.DOTALL)))


class MediaError(EvalDataError):
    """An image that is not shown: the message names the file and why, and what to fix."""


class MediaMissing(MediaError):
    """An image that is not where the log says: no such file, or no such member of the zip."""


@dataclass(frozen=True)
class MediaLimits:
    """Bounds on the images shown (see the module docstring): ``max_image_bytes`` of one file or member,
    ``max_pixels`` (width x height) of one image, ``max_members`` and ``max_archive_bytes`` of a zip of images."""

    max_image_bytes: int = 20 * MB
    max_pixels: int = 50_000_000
    max_members: int = 100_000
    max_archive_bytes: int = 2048 * MB

    @classmethod
    def from_env(cls) -> "MediaLimits":
        """The limits configured by the environment variables of the module docstring."""
        return cls(max_image_bytes=env_number("EVALCORE_MEDIA_IMAGE_MB", 20) * MB,
                   max_pixels=env_number("EVALCORE_MEDIA_MEGAPIXELS", 50) * 1_000_000,
                   max_members=env_number("EVALCORE_MEDIA_ZIP_FILES", 100_000),
                   max_archive_bytes=env_number("EVALCORE_MEDIA_ZIP_MB", 2048) * MB)


@dataclass(frozen=True)
class ShownImage:
    """An image ready to show: ``data`` (re-encoded, ``mime`` image/png or image/jpeg, at most :data:`SHOWN_SIDE`
    pixels a side), the ``format`` the file had and its own ``width`` and ``height``."""

    data: bytes
    mime: str
    format: str
    width: int
    height: int


@dataclass(frozen=True)
class ArchiveSummary:
    """A checked zip of images: its ``members`` (files, folders left out) and their stated ``bytes`` together."""

    members: int
    bytes: int


def media_dir() -> Path | None:
    """The media folder the instance is given (``EVALCORE_MEDIA_DIR``), None when unset."""
    value = os.environ.get("EVALCORE_MEDIA_DIR", "").strip()
    return Path(value) if value else None


def image_suffix(name: object) -> bool:
    """Whether ``name`` ends like an image file (:data:`IMAGE_SUFFIXES`, any case)."""
    return isinstance(name, str) and name.lower().endswith(IMAGE_SUFFIXES)


def clean_name(name: object) -> str:
    """The path a log gives for an image, checked: text, no NUL byte, no URL, no ``..`` part (it could lead out of
    the folder); backslashes read as separators (a log written on Windows). An absolute path is returned as such
    (:func:`resolve_in_folder` accepts it inside the media folder only; a zip has none). MediaError otherwise."""
    text = str(name).strip() if name is not None else ""
    if not text:
        raise MediaError("The image column is empty for this example: give the image's path (relative to the "
                         "media folder or the zip of images).")
    if "\x00" in text:
        raise MediaError(f"{text!r}: a path with a NUL byte is refused: fix the image column.")
    if re.match(r"\A[a-zA-Z][a-zA-Z0-9+.-]*://", text):
        raise MediaError(f"{text!r}: a URL is not read (evalcore reads no network): put the image under the media "
                         "folder (EVALCORE_MEDIA_DIR) or in a zip of images, and give its path there.")
    text = text.replace("\\", "/")
    if ".." in PurePosixPath(text).parts:
        raise MediaError(f"{text!r}: a path with '..' is refused (it could lead out of the media folder): give the "
                         "path below the media folder or inside the zip.")
    return text


def resolve_in_folder(folder: Path, name: object) -> Path:
    """The file ``name`` (:func:`clean_name`) names under ``folder``, its links resolved: MediaError for an absolute
    path outside the folder, a link leading out of it, a missing file or one that is not a plain file."""
    text = clean_name(name)
    root = Path(folder).resolve()
    if not root.is_dir():
        raise MediaError(f"{text!r}: the media folder (EVALCORE_MEDIA_DIR) is not a folder on this server: set it "
                         "to the folder holding the images.")
    path = Path(text)
    if path.is_absolute() and not path.resolve().is_relative_to(root):
        raise MediaError(f"{text!r}: an absolute path outside the media folder (EVALCORE_MEDIA_DIR) is refused: "
                         "give the image's path relative to that folder.")
    resolved = (root / path).resolve()
    if not resolved.is_relative_to(root):
        raise MediaError(f"{text!r}: a link leading out of the media folder (EVALCORE_MEDIA_DIR) is refused: put "
                         "the image itself in the folder.")
    try:
        mode = os.stat(resolved).st_mode
    except OSError:
        raise MediaMissing(f"{text!r}: no such file under the media folder (EVALCORE_MEDIA_DIR): check the path in "
                         "the image column, or add the image to the folder.") from None
    if not stat.S_ISREG(mode):
        raise MediaError(f"{text!r}: not a plain file (a folder, device or pipe) under the media folder: give an "
                         "image file's path.")
    return resolved


def read_file(path: Path, name: str, limits: MediaLimits) -> bytes:
    """The bytes of the plain file ``path`` (named ``name`` in messages), at most ``limits.max_image_bytes``: opened
    without following a link or blocking on a pipe, its size checked before reading and while reading."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise MediaError(f"{name!r}: cannot be opened ({exc.strerror}): check that the file is readable by the "
                         "user running evalcore and is not a link.") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise MediaError(f"{name!r}: not a plain file: give an image file's path.")
        _refuse_size(info.st_size, name, limits)
        data = handle.read(limits.max_image_bytes + 1)
    _refuse_size(len(data), name, limits)
    return data


def _refuse_size(n_bytes: int, name: str, limits: MediaLimits) -> None:
    if n_bytes > limits.max_image_bytes:
        raise MediaError(f"{name!r}: {size_text(n_bytes)}, more than the {size_text(limits.max_image_bytes)} an "
                         "image may have: shrink it, or raise EVALCORE_MEDIA_IMAGE_MB.")


# ------------------------------------------------------------------------------------------------ zip of images
def check_archive(data: bytes, limits: MediaLimits) -> ArchiveSummary:
    """Check a zip of images before it is saved (nothing is unpacked): a zip at all; at most
    ``limits.max_members`` members and ``limits.max_archive_bytes`` (its own size, and its members' stated sizes
    together); no member whose name is absolute, holds ``..`` or a backslash (zip slip: unpacked, it would land
    outside the folder); no encrypted member. MediaError naming the first offending members otherwise."""
    if len(data) > limits.max_archive_bytes:
        raise MediaError(f"The zip of images is {size_text(len(data))}, more than the "
                         f"{size_text(limits.max_archive_bytes)} allowed: split it, or raise EVALCORE_MEDIA_ZIP_MB.")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise MediaError(f"The upload is not a readable zip file ({exc}): zip the image files and upload the "
                         ".zip.") from None
    with archive:
        infos = [i for i in archive.infolist() if not i.is_dir()]
        if len(infos) > limits.max_members:
            raise MediaError(f"The zip of images holds {len(infos):,} files, more than the {limits.max_members:,} "
                             "allowed: split it, or raise EVALCORE_MEDIA_ZIP_FILES.")
        slips = [i.filename for i in infos if _slips(i.filename)]
        if slips:
            raise MediaError(f"The zip of images has member names that lead out of a folder ({_names(slips)}): "
                             "refused (zip slip). Zip the images with relative paths without '..'.")
        locked = [i.filename for i in infos if i.flag_bits & 0x1]
        if locked:
            raise MediaError(f"The zip of images has encrypted members ({_names(locked)}): zip them without a "
                             "password.")
        total = sum(i.file_size for i in infos)
        if total > limits.max_archive_bytes:
            raise MediaError(f"The zip of images expands to {size_text(total)}, more than the "
                             f"{size_text(limits.max_archive_bytes)} allowed: split it, or raise "
                             "EVALCORE_MEDIA_ZIP_MB.")
    return ArchiveSummary(len(infos), total)


def _slips(name: str) -> bool:
    """Whether a zip member's name would land outside the folder it is unpacked into."""
    return ("\\" in name or name.startswith("/") or bool(re.match(r"\A[a-zA-Z]:", name)) or "\x00" in name
            or ".." in PurePosixPath(name).parts)


def _names(names: list[str], first: int = 3) -> str:
    shown = ", ".join(repr(n) for n in names[:first])
    return shown + (f" and {len(names) - first:,} more" if len(names) > first else "")


class _Archive:
    """An open zip of images with its members by name: the exact name, and the name below the one folder that
    holds every member (``images/x.png`` is found as ``x.png`` too)."""

    def __init__(self, path: Path) -> None:
        self.zip = zipfile.ZipFile(path)
        infos = [i for i in self.zip.infolist() if not i.is_dir()]
        self.members = {i.filename: i for i in infos}
        tops = {i.filename.split("/", 1)[0] for i in infos}
        if len(tops) == 1 and all("/" in i.filename for i in infos):
            self.members.update({i.filename.split("/", 1)[1]: i for i in infos
                                 if i.filename.split("/", 1)[1] not in self.members})


@functools.lru_cache(maxsize=8)
def _open_archive(path: str, mtime_ns: int, size: int) -> _Archive:
    """The archive at ``path`` as it was at (``mtime_ns``, ``size``): opened once (its directory read once), so that
    a click to the next example does not read the directory of a large zip again."""
    return _Archive(Path(path))


def read_member(archive: Path, name: object, limits: MediaLimits) -> bytes:
    """The bytes of the member ``name`` (:func:`clean_name`) of the zip ``archive``, at most
    ``limits.max_image_bytes`` whatever the member's header states; MediaError when there is no such member."""
    text = clean_name(name).lstrip("/")
    try:
        info = os.stat(archive)
        opened = _open_archive(str(archive), info.st_mtime_ns, info.st_size)
    except (zipfile.BadZipFile, OSError) as exc:
        raise MediaError(f"{text!r}: the dataset's zip of images cannot be read ({exc}): upload it again.") from None
    member = opened.members.get(text)
    if member is None:
        raise MediaMissing(f"{text!r}: not in the dataset's zip of images: check the path in the image column, or "
                         "upload a zip that holds it.")
    _refuse_size(member.file_size, text, limits)
    try:
        with opened.zip.open(member) as handle:
            data = handle.read(limits.max_image_bytes + 1)
    except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError) as exc:
        raise MediaError(f"{text!r}: its member of the zip of images cannot be read ({exc}): upload the zip "
                         "again.") from None
    _refuse_size(len(data), text, limits)
    return data


# ------------------------------------------------------------------------------------------------ decoding
def image_format(data: bytes) -> str | None:
    """The format ``data`` is in by its signature (PNG, JPEG or WEBP), None for anything else."""
    return next((name for name, signature in _SIGNATURES if signature.match(data[:16])), None)


def decode_image(data: bytes, name: str, limits: MediaLimits) -> ShownImage:
    """``data`` (an image file's bytes, named ``name`` in messages) decoded safely and re-encoded to show (see the
    module docstring): MediaError for bytes beyond the bound, a format other than PNG, JPEG and WebP (by content),
    more than ``limits.max_pixels`` pixels, or a file Pillow cannot decode (truncated, corrupt)."""
    from PIL import Image, ImageOps

    _refuse_size(len(data), name, limits)
    kind = image_format(data)
    if kind is None:
        raise MediaError(f"{name!r}: not a PNG, JPEG or WebP image by its content (whatever its name says): "
                         "convert it to one of those formats.")
    try:
        with Image.open(io.BytesIO(data), formats=[kind]) as image:
            width, height = image.size
            if width * height <= limits.max_pixels:  # checked on the header, before any pixel is decoded
                if kind == "JPEG":
                    image.draft("RGB", (SHOWN_SIDE, SHOWN_SIDE))  # decoded at a reduced scale: less memory, faster
                image.load()
                upright = ImageOps.exif_transpose(image)  # a photo turned as its camera says
                shown = upright.convert("RGBA" if _transparent(upright) else "RGB")
    except Image.DecompressionBombError:
        raise MediaError(f"{name!r}: declares more pixels than Pillow decodes safely (a decompression bomb): "
                         "refused.") from None
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        raise MediaError(f"{name!r}: cannot be decoded as {kind} ({exc}): the file is truncated or corrupt; export "
                         "it again.") from None
    if width * height > limits.max_pixels:
        raise MediaError(f"{name!r}: {width:,} x {height:,} pixels, more than the {limits.max_pixels:,} an image "
                         "may have (a small file declaring so many is a decompression bomb): refused. Shrink it, "
                         "or raise EVALCORE_MEDIA_MEGAPIXELS.")
    shown.thumbnail((SHOWN_SIDE, SHOWN_SIDE))
    out = io.BytesIO()
    if shown.mode == "RGBA":
        shown.save(out, format="PNG", optimize=False)
        mime = "image/png"
    else:
        shown.save(out, format="JPEG", quality=85)
        mime = "image/jpeg"
    return ShownImage(out.getvalue(), mime, kind, width, height)


def _transparent(image) -> bool:
    return image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info


def load_image(name: object, archive: Path | None = None, folder: Path | None = None,
               limits: MediaLimits | None = None) -> ShownImage:
    """The image a log names, ready to show: looked up in the dataset's zip ``archive`` first, then under the media
    ``folder`` (default ``EVALCORE_MEDIA_DIR``), and decoded safely (:func:`decode_image`). MediaError, naming the
    file and why, when it is refused or found nowhere."""
    limits = limits or MediaLimits.from_env()
    folder = media_dir() if folder is None else folder
    text = clean_name(name)
    if archive is None and folder is None:
        raise MediaError(f"{text!r}: this instance has no media folder (EVALCORE_MEDIA_DIR) and the dataset no zip "
                         "of images: upload a zip of the images, or set EVALCORE_MEDIA_DIR where evalcore runs.")
    if archive is not None:
        try:
            return decode_image(read_member(archive, text, limits), text, limits)
        except MediaMissing:
            if folder is None:
                raise
    try:
        path = resolve_in_folder(folder, text)
    except MediaMissing:
        if archive is None:
            raise
        raise MediaMissing(f"{text!r}: neither in the dataset's zip of images nor under the media folder "
                           "(EVALCORE_MEDIA_DIR): check the path in the image column.") from None
    return decode_image(read_file(path, text, limits), text, limits)
