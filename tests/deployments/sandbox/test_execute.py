import os
import socket
import time
from pathlib import Path

import pytest

from deployments.sandbox.execute import SandboxLimits, isolation_report, run_code

LIMITS = SandboxLimits(wall_s=20, cpu_s=20, memory_mb=1024, max_processes=32, output_bytes=4000)


def run(code: str, tmp_path: Path, **limits):
    return run_code(code, tmp_path, SandboxLimits(**{**LIMITS.__dict__, **limits}))


def test_answer_is_the_last_json_line(tmp_path):
    result = run("import json\nprint('working...')\nprint(json.dumps({'e': 1.5}))\n", tmp_path)
    assert result.ok and result.answer == {"e": 1.5} and result.error is None
    assert Path(result.workdir).parent == tmp_path


def test_answer_from_result_json(tmp_path):
    result = run("import json\njson.dump([1, 2], open('result.json', 'w'))\nprint('done')\n", tmp_path)
    assert result.ok and result.answer == [1, 2]


def test_missing_answer_is_explained(tmp_path):
    result = run("print('the answer is 4')\n", tmp_path)
    assert not result.ok and "not a JSON answer" in result.error


def test_exception_reports_its_last_line_without_launcher_frames(tmp_path):
    result = run("def f():\n    raise KeyError('energy')\nf()\n", tmp_path)
    assert result.exit_code == 1 and "KeyError: 'energy'" in result.error
    assert 'File "main.py", line 3' in result.stderr and "<string>" not in result.stderr


def test_infinite_loop_is_killed_at_the_timeout(tmp_path):
    started = time.perf_counter()
    result = run("while True:\n    pass\n", tmp_path, wall_s=1.5)
    assert result.timed_out and "wall-clock limit" in result.error
    assert time.perf_counter() - started < 10


def test_child_process_dies_with_the_run(tmp_path):
    code = (
        "import subprocess, os\n"
        "p = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
        "open(os.path.join(os.environ['HOME'], 'child.pid'), 'w').write(str(p.pid))\n"
        "print(1)\n"
    )
    result = run(code, tmp_path)
    assert result.ok
    if isolation_report()["namespaces"]:
        # Inside a PID namespace the pid file holds the namespaced pid; the sleep must be gone from the host.
        assert not [p for p in Path("/proc").iterdir() if p.name.isdigit() and _cmdline(p) == "sleep\x00300\x00"]


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_text()
    except OSError:
        return ""


def test_memory_hog_is_stopped(tmp_path):
    result = run("x = bytearray(3 * 1024**3)\nprint(1)\n", tmp_path, memory_mb=512)
    assert not result.ok and "memory" in result.error


def test_fork_bomb_is_contained(tmp_path):
    if not isolation_report()["pids_cgroup"] and os.geteuid() == 0 and not isolation_report()["own_user"]:
        pytest.skip("no pids cgroup, and RLIMIT_NPROC does not bind root")
    # 64 sleeping children wanted; the process limit stops it at 16.
    code = "import os, time\nfor _ in range(64):\n    if os.fork() == 0:\n        time.sleep(60)\n        os._exit(0)\nprint(1)\n"
    result = run(code, tmp_path, wall_s=10, max_processes=16)
    assert not result.ok and "processes" in result.error
    time.sleep(0.2)
    leftover = [p for p in Path("/proc").iterdir() if p.name.isdigit() and str(Path(result.workdir)) in _cmdline(p)]  # its launcher's config names its folder
    assert leftover == []


def test_huge_output_is_capped_and_the_answer_still_read(tmp_path):
    code = "import sys, json\nfor _ in range(200000):\n    sys.stdout.write('x' * 50 + '\\n')\nprint(json.dumps(7))\n"
    result = run(code, tmp_path, output_bytes=4000)
    assert result.ok and result.answer == 7
    assert result.stdout_truncated and len(result.stdout) < 5000 and "bytes cut" in result.stdout
    assert result.stdout_ref is None  # short enough to travel inline


def test_long_output_travels_as_a_reference_with_an_excerpt(tmp_path):
    from deployments.sandbox.objects import load_object

    code = "import sys, json\nfor i in range(2000):\n    print(f'step {i}: energy {-3.5 - i * 1e-4:.6f}')\nprint(json.dumps(7))\n"
    result = run(code, tmp_path, output_bytes=64_000)
    assert result.ok and result.answer == 7 and result.stdout_ref is not None
    full = load_object(result.stdout_ref)
    assert full.startswith("step 0:") and full.rstrip().endswith("7") and result.stdout_ref.size == len(full) > 40_000
    assert len(result.stdout) < 6200 and "characters: see stdout_ref" in result.stdout
    assert result.stdout.startswith("step 0:") and result.stdout.rstrip().endswith("7")


def test_environment_is_scrubbed(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-123")
    monkeypatch.setenv("EVOSKILL_LLM_API_KEY", "sk-canary-456")
    result = run("import os, json\nprint(json.dumps(sorted(os.environ)))\n", tmp_path)
    assert result.ok and "OPENAI_API_KEY" not in result.answer and "EVOSKILL_LLM_API_KEY" not in result.answer
    assert not [k for k in result.answer if "KEY" in k or "TOKEN" in k]


def test_network_is_refused(tmp_path):
    if not isolation_report()["namespaces"]:
        pytest.skip("no network namespaces on this machine")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    code = f"import socket, json\ns = socket.socket()\ntry:\n    s.connect(('127.0.0.1', {port}))\n    print(json.dumps('connected'))\nexcept OSError as e:\n    print(json.dumps('refused'))\n"
    try:
        result = run(code, tmp_path)
    finally:
        listener.close()
    assert result.answer == "refused"


def test_nonzero_exit_is_reported(tmp_path):
    result = run("import sys\nprint('{}')\nsys.exit(3)\n", tmp_path)
    assert not result.ok and result.exit_code == 3 and "code 3" in result.error


def test_runs_in_its_own_clean_folder(tmp_path):
    result = run("import os, json\nprint(json.dumps(sorted(os.listdir('.'))))\n", tmp_path)
    assert result.answer == ["main.py", "tmp"]
    assert os.path.realpath(Path(result.workdir)) != os.getcwd()


@pytest.mark.skipif(not isolation_report()["allow_list"], reason="no mount namespace: the view cannot be enforced here")
def test_only_granted_paths_are_visible_and_hidden_ones_inside_them_are_covered(tmp_path):
    data = tmp_path / "data"
    secret_dir = data / "store"
    secret_dir.mkdir(parents=True)
    (secret_dir / "skills.json").write_text('{"answer": 9.9372}')
    answer_file = data / "task.json"
    answer_file.write_text('{"answer": 9.9372}')
    code = (
        "import json, os\n"
        f"print(json.dumps([os.path.exists({str(data)!r}) and os.listdir({str(secret_dir)!r}), os.path.exists({str(data)!r}) and open({str(answer_file)!r}).read()]))\n"
    )
    inside = secret_dir / "skills.json"  # already covered by its hidden folder
    assert run(code, tmp_path / "runs").answer == [False, False]  # not granted: not there at all
    result = run(code, tmp_path / "runs", inputs=(str(data),), hidden=(str(secret_dir), str(inside), str(answer_file)))
    assert result.ok and result.answer == [[], ""]
    assert (secret_dir / "skills.json").exists() and "9.9372" in answer_file.read_text()  # untouched outside
    visible = run(code, tmp_path / "runs2", inputs=(str(data),))
    assert visible.answer == [["skills.json"], '{"answer": 9.9372}']


def test_a_hidden_path_holding_the_run_folder_is_left_visible(tmp_path):
    result = run("import json, os\nprint(json.dumps(os.path.exists('main.py')))\n", tmp_path / "runs", hidden=(str(tmp_path),))
    assert result.ok and result.answer is True


def test_store_folder_is_hidden_by_default(tmp_path):
    from deployments.settings import Settings

    settings = Settings(workspace=tmp_path / "ws", store_path=tmp_path / "store", sandbox_hidden_paths=[tmp_path / "answers"])
    limits = SandboxLimits.from_settings(settings)
    assert str((tmp_path / "store").resolve()) in limits.hidden and str((tmp_path / "answers").resolve()) in limits.hidden


def test_limits_default_to_the_settings_defaults():
    from dataclasses import replace

    from deployments.settings import Settings

    defaults = Settings.model_construct()  # every field at its default, no environment
    assert replace(SandboxLimits.from_settings(defaults), hidden=()) == SandboxLimits()


def test_granted_inputs_come_from_the_settings_and_the_caller(tmp_path):
    from deployments.settings import Settings

    settings = Settings(workspace=tmp_path / "ws", sandbox_inputs=[tmp_path / "shared-data"])
    limits = SandboxLimits.from_settings(settings, inputs=[tmp_path / "in.cif"])
    assert limits.inputs == (str((tmp_path / "shared-data").resolve()), str((tmp_path / "in.cif").resolve()))
