"""Run outputs leave a run folder only as regular image files inside it: every attack a run folder can hold is refused.

Each attack is planted in a run folder the way generated code under the ``none`` isolation can (it writes the host
folder directly); the secret's bytes must then be in no kept copy and no read.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

from deployments.run_outputs import OutputRefused, copy_images, image_type, read_image, read_inside
from deployments.settings import Settings, get_settings

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(64)
JPEG = b"\xff\xd8\xff\xe0" + bytes(64)
GIF = b"GIF89a" + bytes(64)
SVG = b"<svg xmlns='http://www.w3.org/2000/svg' onload='alert(document.cookie)'/>"


@pytest.fixture
def settings(workspace) -> Settings:
    return get_settings()


@pytest.fixture
def secret(settings) -> bytes:
    """The cookie-signing key, where the web app keeps it."""
    value = f"cookie-key-{secrets.token_hex(16)}".encode()
    path = settings.workspace.resolve() / "web-secret"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(value)
    return value


@pytest.fixture
def victim(settings) -> tuple[Path, bytes]:
    """Another user's kept plot: a real PNG carrying a marker."""
    marker = f"another-users-plot-{secrets.token_hex(8)}".encode()
    path = settings.outputs_root() / "other-user-run" / "00.png"
    path.parent.mkdir(parents=True)
    path.write_bytes(PNG + marker)
    return path, marker


@pytest.fixture
def run(settings) -> Path:
    folder = settings.run_root() / "attack-0123abcd"
    folder.mkdir(parents=True)
    return folder


def _kept_bytes(paths: list[str]) -> bytes:
    return b"".join(Path(p).read_bytes() for p in paths)


ATTACKS = {
    "symlink-to-the-cookie-key": lambda run, ws, victim: (run / "secret.png").symlink_to(ws / "web-secret"),
    "symlink-to-etc-shadow": lambda run, ws, victim: (run / "shadow.png").symlink_to("/etc/shadow"),
    "relative-symlink-out-of-the-folder": lambda run, ws, victim: (run / "up.png").symlink_to("../../web-secret"),
    "symlink-to-another-users-plot": lambda run, ws, victim: (run / "theirs.png").symlink_to(victim),
    "hard-link-to-another-users-plot": lambda run, ws, victim: os.link(victim, run / "hard.png"),
    "hard-link-to-the-cookie-key": lambda run, ws, victim: os.link(ws / "web-secret", run / "key.png"),
    "folder-link-in-the-middle": lambda run, ws, victim: (run / "plots").symlink_to(victim.parent, target_is_directory=True),
    "svg": lambda run, ws, victim: (run / "plot.svg").write_bytes(SVG),
    "svg-named-png": lambda run, ws, victim: (run / "plot.png").write_bytes(SVG),
    "png-name-over-the-secret": lambda run, ws, victim: (run / "fake.png").write_bytes((ws / "web-secret").read_bytes()),
    "fifo-named-png": lambda run, ws, victim: os.mkfifo(run / "pipe.png"),
}


@pytest.mark.parametrize("attack", ATTACKS, ids=list(ATTACKS))
def test_no_attack_in_a_run_folder_is_kept(attack, settings, secret, victim, run):
    ATTACKS[attack](run, settings.workspace.resolve(), victim[0])
    (run / "zz-plot.png").write_bytes(PNG)  # the run's real plot is kept beside it
    kept = copy_images(run, settings)
    assert len(kept) == 1 and Path(kept[0]).read_bytes() == PNG
    assert Path(kept[0]).parent == settings.outputs_root() / run.name
    assert secret not in _kept_bytes(kept) and victim[1] not in _kept_bytes(kept)
    if Path("/etc/shadow").is_file() and os.access("/etc/shadow", os.R_OK):
        assert Path("/etc/shadow").read_bytes() not in _kept_bytes(kept)


@pytest.mark.parametrize(
    "name", ["secret.png", "shadow.png", "hard.png", "plots/00.png", "../../web-secret", "../other-user-run/00.png", "./secret.png",
             "/etc/shadow", "", "plots//00.png"],
)  # fmt: skip
def test_read_inside_refuses_links_hard_links_and_paths_out(name, settings, secret, victim, run):
    (run / "secret.png").symlink_to(settings.workspace.resolve() / "web-secret")
    (run / "shadow.png").symlink_to("/etc/shadow")
    os.link(victim[0], run / "hard.png")
    (run / "plots").symlink_to(victim[0].parent, target_is_directory=True)
    with pytest.raises(OutputRefused):
        read_inside(run, name, 1 << 20)


def test_a_run_folder_that_is_itself_a_link_is_not_read(settings, secret, victim):
    link = settings.run_root() / "swapped-0123abcd"
    link.parent.mkdir(parents=True)
    link.symlink_to(victim[0].parent, target_is_directory=True)
    assert copy_images(link, settings) == []
    with pytest.raises(OutputRefused):
        read_inside(link, "00.png", 1 << 20)


def test_images_are_kept_by_content_in_name_order_and_capped(settings, run, monkeypatch):
    (run / "b.gif").write_bytes(GIF)
    (run / "sub").mkdir()
    (run / "sub" / "a.jpeg").write_bytes(JPEG)
    (run / "a.png").write_bytes(PNG)
    (run / "big.png").write_bytes(PNG + bytes(2 * 1024 * 1024))
    (run / "notes.txt").write_bytes(PNG)  # not an image's name
    kept = copy_images(run, get_settings(output_image_mb=1))
    assert [Path(p).name for p in kept] == ["00.png", "01.gif", "02.jpg"]
    assert [read_image(p, settings)[1] for p in kept] == ["image/png", "image/gif", "image/jpeg"]
    many = settings.run_root() / "many-0123abcd"
    many.mkdir()
    for n in range(20):
        (many / f"{n:02d}.png").write_bytes(PNG)
    assert len(copy_images(many, settings)) == 12


def test_read_image_serves_only_kept_copies(settings, secret, victim, run):
    (run / "plot.png").write_bytes(PNG)
    (kept,) = copy_images(run, settings)
    assert read_image(kept, settings) == (PNG, "image/png")
    outputs = settings.outputs_root()
    for path in [settings.workspace.resolve() / "web-secret", f"{outputs}/{run.name}/../../web-secret", f"{outputs}/../web-secret",
                 str(run / "plot.png"), "web-secret", f"{outputs}/x/./00.png"]:  # fmt: skip
        with pytest.raises(OutputRefused):
            read_image(path, settings)
    swapped = outputs / "swapped"
    swapped.mkdir()
    (swapped / "00.png").symlink_to(settings.workspace.resolve() / "web-secret")
    (swapped / "01.png").write_bytes(secret)
    for path in [swapped / "00.png", swapped / "01.png"]:
        with pytest.raises(OutputRefused):
            read_image(path, settings)


def test_image_types_are_told_by_content():
    assert image_type(PNG) == "image/png" and image_type(JPEG) == "image/jpeg" and image_type(GIF) == "image/gif"
    assert image_type(SVG) is None and image_type(b"") is None and image_type(b"\x89PNX") is None
