"""evalcore.data.media: an example's image found only inside the media folder or the dataset's zip, bounded, decoded
safely (decompression bombs and non-images refused by content), re-encoded small; every refusal names the file."""

from __future__ import annotations

import io
import os
import struct
import zipfile
import zlib

import pytest
from PIL import Image

from evalcore.data import media
from evalcore.data.media import MediaError, MediaLimits, MediaMissing, check_archive, decode_image, load_image
from evalcore.workspace import Workspace

LIMITS = MediaLimits()


def _image(fmt: str, size=(40, 30), mode="RGB") -> bytes:
    out = io.BytesIO()
    Image.new(mode, size, (200, 30, 30, 128)[:len(mode)]).save(out, format=fmt)
    return out.getvalue()


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def _bomb_png(width: int, height: int) -> bytes:
    """A PNG of a few hundred bytes that declares ``width`` x ``height`` pixels (its data one compressed row)."""
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit grayscale
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(b"\x00" * (width + 1)))
            + _chunk(b"IEND", b""))


@pytest.fixture()
def folder(tmp_path):
    root = tmp_path / "media"
    (root / "cats").mkdir(parents=True)
    (root / "cats" / "a.png").write_bytes(_image("PNG"))
    return root


@pytest.mark.parametrize("fmt, mime", [("PNG", "image/jpeg"), ("JPEG", "image/jpeg"), ("WEBP", "image/jpeg")])
def test_a_good_png_jpeg_and_webp_are_decoded_and_reencoded(fmt, mime):
    shown = decode_image(_image(fmt, (2000, 1000)), f"x.{fmt.lower()}", LIMITS)
    assert (shown.format, shown.width, shown.height, shown.mime) == (fmt, 2000, 1000, mime)
    again = Image.open(io.BytesIO(shown.data))
    assert max(again.size) == media.SHOWN_SIDE  # shrunk to the shown bound, a fresh file


def test_transparency_is_kept_as_png():
    shown = decode_image(_image("PNG", mode="RGBA"), "t.png", LIMITS)
    assert shown.mime == "image/png" and Image.open(io.BytesIO(shown.data)).mode == "RGBA"


def test_an_image_under_the_media_folder_is_shown(folder):
    shown = load_image("cats/a.png", folder=folder, limits=LIMITS)
    assert (shown.width, shown.height) == (40, 30)
    assert load_image(str(folder / "cats" / "a.png"), folder=folder, limits=LIMITS).width == 40  # absolute, inside


@pytest.mark.parametrize("name, why", [
    ("../secret.png", "'..' is refused"),
    ("cats/../../secret.png", "'..' is refused"),
    ("..\\secret.png", "'..' is refused"),  # a Windows path
    ("/etc/passwd", "absolute path outside the media folder"),
    ("http://example.org/x.png", "URL is not read"),
    ("cats/none.png", "no such file"),
    ("cats", "not a plain file"),
    ("", "empty"),
])
def test_paths_out_of_the_folder_or_nowhere_are_refused_naming_the_file(folder, name, why):
    (folder.parent / "secret.png").write_bytes(_image("PNG"))
    with pytest.raises(MediaError, match=why) as refused:
        load_image(name, folder=folder, limits=LIMITS)
    if name:
        assert repr(name.strip().replace("\\", "/"))[1:-1] in str(refused.value)


def test_a_link_leading_out_of_the_folder_is_refused(folder):
    outside = folder.parent / "outside.png"
    outside.write_bytes(_image("PNG"))
    os.symlink(outside, folder / "cats" / "link.png")
    os.symlink(folder.parent, folder / "up")
    for name in ("cats/link.png", "up/outside.png"):
        with pytest.raises(MediaError, match="link leading out of the media folder"):
            load_image(name, folder=folder, limits=LIMITS)
    os.symlink(folder / "cats" / "a.png", folder / "inside.png")  # a link that stays inside is followed
    assert load_image("inside.png", folder=folder, limits=LIMITS).width == 40


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
def test_a_decompression_bomb_is_refused_before_decoding():
    bomb = _bomb_png(100_000, 100_000)  # ten billion pixels declared in a few hundred bytes
    assert len(bomb) < 1000
    with pytest.raises(MediaError, match="decompression bomb"):
        decode_image(bomb, "bomb.png", LIMITS)
    with pytest.raises(MediaError, match="10,000 x 10,000 pixels"):  # above our bound, below Pillow's own
        decode_image(_bomb_png(10_000, 10_000), "big.png", MediaLimits(max_pixels=1_000_000))


def test_a_file_that_is_not_an_image_is_refused_by_its_content(folder):
    (folder / "fake.png").write_bytes(b"<svg xmlns='http://www.w3.org/2000/svg'/>")
    with pytest.raises(MediaError, match="'fake.png': not a PNG, JPEG or WebP image by its content"):
        load_image("fake.png", folder=folder, limits=LIMITS)
    gif = io.BytesIO()
    Image.new("RGB", (4, 4)).save(gif, format="GIF")
    with pytest.raises(MediaError, match="not a PNG, JPEG or WebP"):
        decode_image(gif.getvalue(), "x.png", LIMITS)
    with pytest.raises(MediaError, match="truncated or corrupt"):
        decode_image(_image("PNG")[:60], "cut.png", LIMITS)


def test_an_image_above_the_byte_bound_is_refused_unread(folder):
    small = MediaLimits(max_image_bytes=100)
    with pytest.raises(MediaError, match="more than the 100 bytes an image may have"):
        load_image("cats/a.png", folder=folder, limits=small)


def _zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def test_a_zip_of_images_is_checked_and_read_member_by_member(tmp_path):
    data = _zip({"images/a.png": _image("PNG"), "images/b.jpg": _image("JPEG"), "images/readme.txt": b"hi"})
    assert check_archive(data, LIMITS).members == 3
    path = tmp_path / "m.zip"
    path.write_bytes(data)
    assert load_image("images/a.png", archive=path, limits=LIMITS).format == "PNG"
    assert load_image("b.jpg", archive=path, limits=LIMITS).format == "JPEG"  # below its one top folder
    with pytest.raises(MediaMissing, match="'c.png': not in the dataset's zip of images"):
        load_image("c.png", archive=path, limits=LIMITS)
    with pytest.raises(MediaError, match="not a PNG, JPEG or WebP"):
        load_image("readme.txt", archive=path, limits=LIMITS)


@pytest.mark.parametrize("name", ["../evil.png", "/abs/evil.png", "a/../../evil.png", "C:/evil.png", "a\\..\\e.png"])
def test_a_zip_slip_member_refuses_the_whole_zip(name):
    with pytest.raises(MediaError, match="zip slip"):
        check_archive(_zip({"ok.png": _image("PNG"), name: _image("PNG")}), LIMITS)


def test_a_zip_beyond_its_bounds_is_refused():
    data = _zip({f"{i}.png": b"x" * 1000 for i in range(5)})
    with pytest.raises(MediaError, match="holds 5 files, more than the 4"):
        check_archive(data, MediaLimits(max_members=4))
    with pytest.raises(MediaError, match="expands to 5 KB, more than"):
        check_archive(data, MediaLimits(max_archive_bytes=len(data) + 10))
    with pytest.raises(MediaError, match="not a readable zip"):
        check_archive(b"PK\x03\x04 not really", LIMITS)


def test_a_member_above_the_byte_bound_is_refused(tmp_path):
    big = _image("PNG", (600, 600))
    path = tmp_path / "m.zip"
    path.write_bytes(_zip({"big.png": big}))
    with pytest.raises(MediaError, match="'big.png'.*more than the 100 bytes"):
        load_image("big.png", archive=path, limits=MediaLimits(max_image_bytes=100))


def test_without_a_folder_or_a_zip_the_message_says_what_to_set(monkeypatch):
    monkeypatch.delenv("EVALCORE_MEDIA_DIR", raising=False)
    with pytest.raises(MediaError, match="'a.png': this instance has no media folder"):
        load_image("a.png", limits=LIMITS)


def test_the_workspace_keeps_a_dataset_zip_for_its_owner_only(tmp_path):
    import pandas as pd

    ws = Workspace(tmp_path / "ws")
    frame = pd.DataFrame({"model": "m", "example_id": ["1", "2"], "image": ["a.png", "b.png"], "correct": [1, 0]})
    record = ws.add_dataset(frame.to_csv(index=False).encode(), "images", owner="ann@example.org")
    assert ws.media_archive(record.id, "ann@example.org") is None
    with pytest.raises(MediaError, match="zip slip"):
        ws.add_media(record.id, _zip({"../a.png": b"x"}), viewer="ann@example.org")
    assert ws.media_archive(record.id, "ann@example.org") is None  # refused: nothing written
    with pytest.raises(PermissionError):
        ws.add_media(record.id, _zip({"a.png": _image("PNG")}), viewer="bob@example.org")
    assert ws.add_media(record.id, _zip({"a.png": _image("PNG")}), viewer="ann@example.org").members == 1
    archive = ws.media_archive(record.id, "ann@example.org")
    assert load_image("a.png", archive=archive, limits=LIMITS).width == 40
    ws.delete(record.id, viewer="ann@example.org")
    assert not archive.exists()
