"""A real one-node SLURM cluster on this machine, for the tests of the SLURM profile.

Nothing is installed here: without Debian's slurm-wlm and munge (or without root) the tests
skip, and the reason gives the apt-get line. The daemons run in the foreground as children of
the test, are started by hand (there is no systemd) and stopped by their PIDs.

Where the configuration lives, and why:
- slurm.conf is in a temporary directory, and only the environment this module hands out
  (`SlurmCluster.env`) points SLURM_CONF at it. Snakemake submits with that environment.
- Inside a job, the jobstep plugin drops every SLURM_* variable, SLURM_CONF too, before its
  inner `srun`. So slurmd runs "configless": it fetches slurm.conf from slurmctld and caches
  it under /run/slurm/conf, where commands on the node look when SLURM_CONF is unset, as on
  a real configless cluster. Configless slurmd authenticates through munge's default
  socket, so munged serves /run/munge/munge.socket.2 (an already running munged is reused).
- Stopping removes the temporary directory and the /run/slurm/conf link into it: no
  slurm.conf of stopped daemons stays behind, which would make every later Snakemake call
  about 9 s slower (the SLURM plugin probes `scontrol`; docs/environment.md).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from system_packages import missing

PACKAGES = ("slurm-wlm", "munge")
NODE = "testnode"
PARTITION = "debug"
# Declared larger than a small test machine (SlurmdParameters=config_overrides), so that
# every job of a Snakemake wave runs at once; with task/none nothing enforces them.
CPUS = 16
MEMORY_MB = 64000
MUNGE_RUN = Path("/run/munge")
SLURMD_CONF_CACHE = Path("/run/slurm/conf")


class ClusterUnavailable(RuntimeError):
    """SLURM is not installed here, or its daemons cannot be started: the tests skip."""


def check_runnable() -> None:
    """Raise ClusterUnavailable, with the apt-get line, where slurm-wlm or munge is missing,
    or where the daemons cannot be started (they run as root and as the user munge)."""
    reason = missing(*PACKAGES)
    if reason:
        raise ClusterUnavailable(reason)
    if os.geteuid() != 0:
        raise ClusterUnavailable("the test cluster's daemons run as root: run the tests as root")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _munge_works() -> bool:
    """A munged answers on the default socket."""
    return subprocess.run(["munge", "-n"], capture_output=True).returncode == 0


def slurm_conf(root: Path, host: str, port: int) -> str:
    """A one-node cluster without accounting, all its state under `root`."""
    return f"""\
ClusterName=attnbias-test
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={port}
SlurmdPort={_free_port()}
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# no cgroups and no accounting daemon: what a container without systemd can run
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
ReturnToService=2
SlurmdParameters=config_overrides
# slurmd fetches this file from slurmctld (see the module docstring)
SlurmctldParameters=enable_configless
# finished jobs stay visible to squeue this long: the plugin polls squeue, the tests too
MinJobAge=3600
NodeName={NODE} NodeAddr=127.0.0.1 CPUs={CPUS} RealMemory={MEMORY_MB} State=UNKNOWN
PartitionName={PARTITION} Nodes={NODE} Default=YES MaxTime=INFINITE State=UP
"""


class SlurmCluster:
    """munged (unless one runs already), slurmctld and slurmd."""

    def __init__(self):
        self.root: Path | None = None
        self.env: dict[str, str] = {}
        self._daemons: list[tuple[str, subprocess.Popen]] = []
        self._made_munge_run = False
        self._made_slurm_run = False

    @property
    def controller_log(self) -> Path:
        return self.root / "slurmctld.log"

    def start(self, timeout: float = 60) -> SlurmCluster:
        check_runnable()
        self._made_slurm_run = not SLURMD_CONF_CACHE.parent.exists()
        self.root = Path(tempfile.mkdtemp(prefix="attnbias-slurm-"))
        self.root.chmod(0o711)  # munged, as user munge, reads its key in here
        for sub in ("state", "spool", "munge"):
            (self.root / sub).mkdir()
        conf = self.root / "slurm.conf"
        port = _free_port()
        conf.write_text(slurm_conf(self.root, socket.gethostname().split(".")[0], port))
        self.env = dict(os.environ, SLURM_CONF=str(conf))
        try:
            if not _munge_works():
                self._start_munged()
            self._spawn("slurmctld", ["slurmctld", "-D"])
            node_env = {k: v for k, v in os.environ.items() if k != "SLURM_CONF"}
            configless = ["--conf-server", f"127.0.0.1:{port}"]
            self._spawn("slurmd", ["slurmd", "-D", "-N", NODE, *configless], env=node_env)
            self._wait(self._node_idle, timeout, f"node {NODE} idle in sinfo")
        except BaseException:
            self.stop()
            raise
        return self

    def _start_munged(self) -> None:
        munge = self.root / "munge"
        key = munge / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        for path in (munge, key):
            shutil.chown(path, "munge", "munge")
        if not MUNGE_RUN.exists():
            MUNGE_RUN.mkdir(mode=0o755)
            shutil.chown(MUNGE_RUN, "munge", "munge")
            self._made_munge_run = True
        command = ["munged", "--foreground", f"--key-file={key}"]
        command += [f"--{name}-file={munge}/munged.{name}" for name in ("pid", "seed", "log")]
        self._spawn("munged", command, user="munge", group="munge")
        self._wait(_munge_works, 30, "munged to answer")

    def _spawn(self, name: str, command: list[str], **kwargs) -> None:
        kwargs.setdefault("env", self.env)
        with open(self.root / f"{name}.out", "w") as log:
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, **kwargs)
        self._daemons.append((name, process))

    def _wait(self, ready, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            for name, process in self._daemons:
                if process.poll() is not None:
                    raise RuntimeError(
                        f"{name} exited with {process.returncode} while waiting for {what}:\n"
                        + self.logs()
                    )
            if time.monotonic() > deadline:
                raise RuntimeError(f"{timeout} s passed waiting for {what}:\n{self.logs()}")
            time.sleep(0.2)

    def _node_idle(self) -> bool:
        out = self.run("sinfo", "-h", "-N", "-n", NODE, "-o", "%T", check=False).stdout
        return out.strip() == "idle"

    def run(self, *command: str, check: bool = True) -> subprocess.CompletedProcess:
        """A SLURM client command against this cluster."""
        return subprocess.run(command, env=self.env, capture_output=True, text=True, check=check)

    def jobs(self) -> dict[str, tuple[str, str]]:
        """Every job slurmctld still knows (MinJobAge): SLURM id -> (state, job name)."""
        out = self.run("squeue", "-h", "--states=all", "-o", "%i|%T|%j").stdout
        rows = (line.split("|") for line in out.splitlines() if line.strip())
        return {job_id: (state, name) for job_id, state, name in rows}

    def logs(self) -> str:
        parts = []
        for path in sorted(self.root.glob("*.log")) + sorted(self.root.glob("*.out")):
            parts.append(f"--- {path.name}\n{path.read_text(errors='replace')[-3000:]}")
        return "\n".join(parts)

    def stop(self) -> None:
        """Cancel what still runs, stop exactly the daemons started here, delete the files."""
        if any(name == "slurmctld" and p.poll() is None for name, p in self._daemons):
            try:
                jobs = self.jobs()
            except subprocess.CalledProcessError:
                jobs = {}
            active = [i for i, (state, _) in jobs.items() if state in ("PENDING", "RUNNING")]
            if active:
                self.run("scancel", *active, check=False)
        for _, process in reversed(self._daemons):  # slurmd, slurmctld, then munged
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._daemons.clear()
        if self.root is not None:
            # slurmd's link to its cached configuration, inside our spool directory
            if SLURMD_CONF_CACHE.is_symlink() and str(os.readlink(SLURMD_CONF_CACHE)).startswith(
                str(self.root)
            ):
                SLURMD_CONF_CACHE.unlink()
            if self._made_slurm_run and SLURMD_CONF_CACHE.parent.exists():
                SLURMD_CONF_CACHE.parent.rmdir()  # slurmd made it; empty now
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None
        if self._made_munge_run:
            shutil.rmtree(MUNGE_RUN, ignore_errors=True)
            self._made_munge_run = False
