"""What can be checked of the Dockerfile without a Docker engine.

* the Dockerfile itself: slim Python 3.11+ base image, a non-root USER, EXPOSE 8501, a CMD serving streamlit on
  0.0.0.0:8501 and a HEALTHCHECK on /_stcore/health that needs neither curl nor wget (the slim image has neither);
* the build context: every COPY source exists and survives .dockerignore (its allow-list semantics are implemented
  below), and every file the app needs at runtime ends up in the image;
* the build and the container, simulated (slow): the Dockerfile's COPY and pip steps replayed into a fresh virtual
  environment and app folder, its CMD started there and its HEALTHCHECK command run against it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pytest

from benchmarks.server import streamlit_server
import crafted

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
PORT = 8501

#: Files the dashboard reads at runtime, as globs relative to the repository root (and to the image's WORKDIR).
RUNTIME_GLOBS = ("app.py", "pages/*.py", "pages/common/*.py", "evalcore/*.py", ".streamlit/config.toml")


# ------------------------------------------------------------------------------------------------ Dockerfile


@dataclass(frozen=True)
class Instruction:
    keyword: str  # upper case, e.g. "COPY"
    args: str     # the rest of the logical line, continuations joined


def parse_dockerfile(text: str) -> list[Instruction]:
    """The Dockerfile's instructions: comments and blank lines dropped, ``\\`` continuations joined."""
    instructions, pending = [], ""
    for line in text.splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):  # comment lines inside a continuation are ignored by docker
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        logical = (pending + stripped).strip()
        pending = ""
        if logical:
            keyword, _, args = logical.partition(" ")
            instructions.append(Instruction(keyword.upper(), args.strip()))
    assert not pending, "the Dockerfile ends inside a line continuation"
    return instructions


def exec_form(args: str) -> list[str]:
    """A JSON (exec form) argument list; the shell form fails the test (no shell is assumed in the image)."""
    try:
        value = json.loads(args)
    except json.JSONDecodeError:
        pytest.fail(f"expected the exec form (a JSON list), got the shell form: {args}")
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), args
    return value


def only(instructions: list[Instruction], keyword: str) -> Instruction:
    found = [i for i in instructions if i.keyword == keyword]
    assert found, f"the Dockerfile has no {keyword}"
    return found[-1]  # docker uses the last one


def options(argv: list[str]) -> dict[str, str]:
    """``--name=value`` and ``--name value`` options of a command line."""
    out, i = {}, 0
    while i < len(argv):
        arg = argv[i]
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if not eq and i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                value, i = argv[i + 1], i + 1
            out[name] = value
        i += 1
    return out


def healthcheck_command(instructions: list[Instruction]) -> list[str]:
    args = only(instructions, "HEALTHCHECK").args
    match = re.match(r"((?:--[\w-]+=\S+\s+)*)CMD\s+(.*)$", args, re.S)
    assert match, f"HEALTHCHECK must be 'HEALTHCHECK [options] CMD ...', got: {args}"
    return exec_form(match.group(2))


@pytest.fixture(scope="module")
def dockerfile() -> list[Instruction]:
    return parse_dockerfile(DOCKERFILE.read_text(encoding="utf-8"))


def test_base_image_is_slim_python_311_or_later(dockerfile):
    froms = [i for i in dockerfile if i.keyword == "FROM"]
    assert froms, "no FROM"
    image = froms[-1].args.split()[0]  # the final stage is the image that runs
    match = re.fullmatch(r"python:(\d+)\.(\d+)(?:\.\d+)?-slim(?:-[a-z]+)?(?:@sha256:[0-9a-f]{64})?", image)
    assert match, f"expected a slim official Python image such as python:3.11-slim, got {image}"
    assert (int(match.group(1)), int(match.group(2))) >= (3, 11), image


def test_runs_as_a_non_root_user(dockerfile):
    user = only(dockerfile, "USER").args.split(":")[0]
    assert user not in ("root", "0"), f"the container runs as {user}"
    if not user.isdigit():  # a named user must be created in the image
        creates = re.compile(rf"\b(useradd|adduser)\b.*\b{re.escape(user)}\b")
        created = [i for i in dockerfile if i.keyword == "RUN" and creates.search(i.args)]
        assert created, f"USER {user} is never created (useradd/adduser)"
    last_user = max(k for k, i in enumerate(dockerfile) if i.keyword == "USER")
    last_cmd = max(k for k, i in enumerate(dockerfile) if i.keyword == "CMD")
    assert last_user < last_cmd


def test_exposes_port_8501(dockerfile):
    ports = {p.split("/")[0] for i in dockerfile if i.keyword == "EXPOSE" for p in i.args.split()}
    assert str(PORT) in ports


def test_cmd_serves_streamlit_on_all_interfaces_port_8501(dockerfile):
    cmd = exec_form(only(dockerfile, "CMD").args)
    launcher = "app.py"  # served behind evalcore's request guard (app.py's st.App)
    streamlit_run = cmd[:3] == ["streamlit", "run", launcher] or cmd[1:5] == ["-m", "streamlit", "run", launcher]
    assert streamlit_run, f"CMD does not run `streamlit run {launcher}`: {cmd}"
    opts = options(cmd)
    assert opts.get("--server.address") == "0.0.0.0", cmd
    assert opts.get("--server.port") == str(PORT), cmd


def test_healthcheck_probes_stcore_health_without_curl_or_wget(dockerfile):
    cmd = healthcheck_command(dockerfile)
    joined = " ".join(cmd)
    assert f"127.0.0.1:{PORT}/_stcore/health" in joined or f"localhost:{PORT}/_stcore/health" in joined, joined
    assert not re.search(r"\b(curl|wget)\b", joined), f"the slim image has neither curl nor wget: {joined}"
    assert cmd[0] in ("python", "python3"), f"the check should use the image's python: {cmd}"


# ------------------------------------------------------------------------------------------------ .dockerignore


def _pattern_regex(pattern: str) -> re.Pattern:
    """A .dockerignore pattern (Go filepath.Match syntax plus ``**``) as a regex on slash-separated paths."""
    out, i = "", 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif c == "*":
            out, i = out + "[^/]*", i + 1
        elif c == "?":
            out, i = out + "[^/]", i + 1
        elif c == "[":
            end = pattern.index("]", i + 1)
            body = pattern[i + 1:end]
            out, i = out + "[" + ("^" + body[1:] if body.startswith("^") else body) + "]", end + 1
        elif c == "\\" and i + 1 < len(pattern):
            out, i = out + re.escape(pattern[i + 1]), i + 2
        else:
            out, i = out + re.escape(c), i + 1
    return re.compile(out)


@dataclass(frozen=True)
class Rule:
    exception: bool      # a "!pattern" line: re-include what it matches
    pattern: str         # cleaned, as docker does (no leading or trailing slash)
    regex: re.Pattern


def dockerignore_rules(text: str) -> list[Rule]:
    """The patterns of a .dockerignore, in file order (comments and blank lines skipped)."""
    rules = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        exception = line.startswith("!")
        pattern = line[1:].strip() if exception else line
        pattern = str(PurePosixPath("/" + pattern.strip("/")))[1:] or "."  # filepath.Clean, no leading slash
        rules.append(Rule(exception, pattern, _pattern_regex(pattern)))
    return rules


def is_excluded(path: str, rules: list[Rule]) -> bool:
    """Docker's rule: the last pattern matching the path *or one of its parent folders* decides."""
    parts = PurePosixPath(path).parts
    candidates = ["/".join(parts[:k]) for k in range(1, len(parts) + 1)]
    excluded = False
    for rule in rules:
        if any(rule.regex.fullmatch(c) for c in candidates):
            excluded = not rule.exception
    return excluded


def test_dockerignore_semantics():
    rules = dockerignore_rules("*\n!app.py\n!pkg/\n**/__pycache__\n**/*.pyc\n!keep.pyc\n# comment\n")
    assert is_excluded("README.md", rules)
    assert is_excluded("tests/test_x.py", rules)  # via its parent folder "tests"
    assert not is_excluded("app.py", rules)
    assert not is_excluded("pkg/a/b.py", rules)
    assert is_excluded("pkg/__pycache__/b.cpython-311.pyc", rules)
    assert is_excluded("__pycache__/x.py", rules)  # ** matches no folder too
    assert is_excluded("pkg/x.pyc", rules)
    assert not is_excluded("keep.pyc", rules)


# ------------------------------------------------------------------------------------------------ build context


def context_files(rules: list[Rule]) -> list[str]:
    """Every file of the repository that .dockerignore lets into the build context (slash-separated)."""
    files = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        rel_dir = Path(dirpath).relative_to(ROOT).as_posix()
        prefix = "" if rel_dir == "." else rel_dir + "/"
        # skip excluded folders (.venv, .git, ...) unless an exception could re-include something inside them
        dirnames[:] = [d for d in dirnames if not is_excluded(prefix + d, rules) or any(
            r.exception and (r.pattern.startswith(prefix + d + "/") or r.pattern.startswith("*")) for r in rules)]
        files.extend(prefix + name for name in filenames if not is_excluded(prefix + name, rules))
    return sorted(files)


def copy_steps(instructions: list[Instruction]) -> list[tuple[list[str], str, str]]:
    """``(sources, destination, workdir)`` of each COPY/ADD from the build context."""
    steps, workdir = [], "/"
    for ins in instructions:
        if ins.keyword == "WORKDIR":
            workdir = str(PurePosixPath(workdir) / ins.args.strip())
        elif ins.keyword in ("COPY", "ADD"):
            words = exec_form(ins.args) if ins.args.startswith("[") else shlex.split(ins.args)
            flags = [w for w in words if w.startswith("--")]
            assert not any(f.startswith("--from") for f in flags), "multi-stage COPY --from is not handled here"
            paths = [w for w in words if not w.startswith("--")]
            steps.append((paths[:-1], paths[-1], workdir))
    return steps


def image_files(instructions: list[Instruction], context: list[str]) -> dict[str, str]:
    """``{path in the image: path in the repository}`` of every file the COPY steps put into the image."""
    out = {}
    for sources, dest, workdir in copy_steps(instructions):
        target = PurePosixPath(workdir) / dest
        for src in sources:
            src_clean = PurePosixPath(src.rstrip("/") or ".").as_posix()
            if (ROOT / src_clean).is_dir():
                prefix = "" if src_clean == "." else src_clean + "/"
                for rel in context:
                    if rel.startswith(prefix):
                        out[str(target / rel[len(prefix):])] = rel  # a folder's *contents* go to dest
            elif src_clean in context:
                name = PurePosixPath(src_clean).name
                out[str(target / name if dest.endswith("/") or len(sources) > 1 else target)] = src_clean
    return out


@pytest.fixture(scope="module")
def rules() -> list[Rule]:
    return dockerignore_rules(DOCKERIGNORE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def context(rules) -> list[str]:
    return context_files(rules)


def test_every_copy_source_exists_and_is_in_the_build_context(dockerfile, rules, context):
    steps = copy_steps(dockerfile)
    assert steps, "the Dockerfile copies nothing"
    for sources, _, _ in steps:
        for src in sources:
            path = ROOT / src
            assert path.exists(), f"COPY {src}: no such file or folder in the repository"
            rel = PurePosixPath(src.rstrip("/")).as_posix()
            assert not is_excluded(rel, rules), f"COPY {src}: excluded by .dockerignore"
            if path.is_dir():
                kept = [f for f in context if f.startswith(rel + "/")]
                assert kept, f"COPY {src}: .dockerignore excludes every file in it"


def test_runtime_files_end_up_in_the_workdir(dockerfile, context):
    workdir = copy_steps(dockerfile)[-1][2]
    files = image_files(dockerfile, context)
    needed = sorted({p.relative_to(ROOT).as_posix() for g in RUNTIME_GLOBS for p in ROOT.glob(g)})
    assert "app.py" in needed and any(n.startswith("evalcore/") for n in needed)
    missing = [n for n in needed if files.get(str(PurePosixPath(workdir) / n)) != n]
    assert not missing, f"needed at runtime but not copied to {workdir}: {missing}"
    assert files.get(str(PurePosixPath(workdir) / "requirements.txt")) == "requirements.txt"


def test_image_gets_no_tests_caches_or_secrets(dockerfile, context):
    files = image_files(dockerfile, context).values()
    unwanted = [f for f in files if re.search(r"(^|/)(\.venv|\.git|tests|__pycache__|\.pytest_cache|\.hypothesis)/"
                                              r"|\.pyc$|(^|/)secrets\.toml$", f)]
    assert not unwanted, unwanted


# ------------------------------------------------------------------------------------------------ build + run


def env_vars(args: str) -> dict[str, str]:
    """The variables of an ENV instruction: ``KEY=value ...`` or the legacy ``KEY value``."""
    words = shlex.split(args)
    if words and "=" not in words[0]:
        return {words[0]: " ".join(words[1:])}
    return dict(w.split("=", 1) for w in words)


def _in_venv(argv: list[str], venv: Path) -> list[str]:
    """``argv`` with its program (python, pip, streamlit, ...) taken from ``venv``'s bin folder; a dependency's
    command that :func:`crafted.fresh_venv` found installed already (its script lives with the tests' packages)
    runs as ``python -m`` of the environment's own interpreter."""
    program = venv / "bin" / argv[0]
    if program.exists():
        return [str(program), *argv[1:]]
    found = subprocess.run([venv / "bin" / "python", "-c", f"import {argv[0]}"], capture_output=True)
    assert found.returncode == 0, f"{argv[0]} is not in the virtual environment"
    return [str(venv / "bin" / "python"), "-m", argv[0], *argv[1:]]


def _port_swapped(argv: list[str], port: int) -> list[str]:
    swapped = [re.sub(rf"(?<![0-9]){PORT}(?![0-9])", str(port), a) for a in argv]
    assert swapped != argv, f"port {PORT} not found in {argv}"
    return swapped


@pytest.mark.slow
def test_fresh_install_serves_the_healthcheck(dockerfile, context, tmp_path):
    """Replay the build into a fresh venv + app folder, start the CMD there and run the HEALTHCHECK command."""
    venv, root, home = tmp_path / "venv", tmp_path / "image", tmp_path / "home"
    home.mkdir()
    crafted.fresh_venv(venv)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "STREAMLIT_"))}
    for ins in dockerfile:
        if ins.keyword == "ENV":
            env.update(env_vars(ins.args))
    env.pop("PIP_NO_CACHE_DIR", None)  # a throw-away layer in docker; here the local pip cache saves minutes
    env.update(HOME=str(home), VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")

    # the build: COPY into the WORKDIR, RUN python/pip steps with the venv (system steps like useradd skipped)
    workdir, installed = "/", False
    for ins in dockerfile:
        if ins.keyword == "WORKDIR":
            workdir = str(PurePosixPath(workdir) / ins.args.strip())
            (root / workdir.lstrip("/")).mkdir(parents=True, exist_ok=True)
        elif ins.keyword in ("COPY", "ADD"):
            for image_path, repo_path in image_files([Instruction("WORKDIR", workdir), ins], context).items():
                target = root / image_path.lstrip("/")
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / repo_path, target)
        elif ins.keyword == "RUN" and re.match(r"(python3?|pip3?)\b", ins.args):
            argv = _in_venv(exec_form(ins.args) if ins.args.startswith("[") else shlex.split(ins.args), venv)
            done = subprocess.run(argv, cwd=root / workdir.lstrip("/"), env=env, capture_output=True, text=True,
                                  timeout=900)
            assert done.returncode == 0, f"RUN {ins.args} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            installed = installed or "pip" in ins.args
    assert installed, "no RUN step installs the requirements with pip"
    app_dir = root / workdir.lstrip("/")
    expected = sorted(str(PurePosixPath(p).relative_to(workdir)) for p in image_files(dockerfile, context))
    assert sorted(p.relative_to(app_dir).as_posix() for p in app_dir.rglob("*") if p.is_file()) == expected

    # the container: the CMD on a free port instead of 8501, everything else as written
    cmd = exec_form(only(dockerfile, "CMD").args)
    with streamlit_server(lambda port: _in_venv(_port_swapped(cmd, port), venv), cwd=app_dir, env=env,
                          log_path=tmp_path / "server.log") as server:
        port = int(server.url.rsplit(":", 1)[1])
        check = _in_venv(_port_swapped(healthcheck_command(dockerfile), port), venv)
        probe = subprocess.run(check, cwd=app_dir, env=env, capture_output=True, text=True, timeout=30)
        assert probe.returncode == 0, f"HEALTHCHECK failed: {probe.stdout}{probe.stderr}"
    # and the check is not vacuous: with the server gone it fails
    probe = subprocess.run(check, cwd=app_dir, env=env, capture_output=True, text=True, timeout=30)
    assert probe.returncode != 0
