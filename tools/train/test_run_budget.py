"""run_budget.sh's sizing: the DiT minutes and the call's timeout it hands
run_gpu.sh for a budget and a time of asking, and the calls it declines.
A `timeout` earlier on PATH stands in for the real one and reports the
arguments instead of running the training.

  python3 -m unittest test_run_budget     (bash; make train-check)
"""

import os
import subprocess
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "run_budget.sh")


class RunBudget(unittest.TestCase):
    def setUp(self):
        self.bin = tempfile.TemporaryDirectory()
        fake = os.path.join(self.bin.name, "timeout")
        with open(fake, "w") as f:
            f.write('#!/bin/sh\necho "timeout $*"\n')
        os.chmod(fake, 0o755)

    def tearDown(self):
        self.bin.cleanup()

    def call(self, spent_s, budget_s, examples=3200, **env):
        """(exit status, [timeout's seconds, DiT minutes, examples] or None)."""
        asked = int(time.time()) - spent_s
        # the command is taken to start with the script unless env says otherwise
        env.setdefault("CALL_START", str(int(time.time())))
        e = dict(os.environ, PATH=self.bin.name + os.pathsep + os.environ["PATH"], **env)
        r = subprocess.run(["bash", SCRIPT, str(asked), str(budget_s), str(examples)],
                           capture_output=True, text=True, env=e)
        for line in r.stdout.splitlines():
            if line.startswith("timeout "):
                w = line.split()
                return r.returncode, [int(w[1]), float(w[-2]), int(w[-1])] if w[-3] == "0" else None
        return r.returncode, None

    def test_late_machine_gets_what_is_left(self):
        # 800 s of budget, 200 s spent starting: 585 s left, 7.8 DiT minutes
        # after the margin (115 s); 300 s spent: 485 s, 6.2 minutes
        rc, args = self.call(200, 800)
        self.assertEqual(rc, 0)
        self.assertLessEqual(abs(args[0] - 585), 1)
        self.assertAlmostEqual(args[1], 7.8, delta=0.05)
        self.assertEqual(args[2], 3200)
        rc, args = self.call(300, 800)
        self.assertLessEqual(abs(args[0] - 485), 1)
        self.assertAlmostEqual(args[1], 6.2, delta=0.05)
        # 584 s left: 469 s of DiT, 7.82 minutes, given to the nearest tenth
        rc, args = self.call(200, 799)
        self.assertAlmostEqual(args[1], 7.8, delta=0.05)

    def test_a_text_encoder_call_keeps_more_for_its_checks(self):
        # DTEXT: 65 s more kept outside the DiT (180 against 115), the call's timeout the same
        rc, plain = self.call(200, 800)
        rc, text = self.call(200, 800, DTEXT="1e-4")
        self.assertEqual(rc, 0)
        self.assertEqual(text[0], plain[0])
        self.assertAlmostEqual(plain[1] - text[1], 1.0, delta=0.05)

    def test_full_budget_is_capped_at_one_command(self):
        rc, args = self.call(60, 1800)
        self.assertLessEqual(abs(args[0] - 585), 1)

    def test_what_ran_before_in_the_command_counts(self):
        # a probe of 30 s before the script in the same command: 555 s left of the 600
        rc, args = self.call(60, 1800, CALL_START=str(int(time.time()) - 30))
        self.assertLessEqual(abs(args[0] - 555), 1)

    def test_the_commands_shell_is_the_clock_by_default(self):
        # the script as the command line's last part, run in the command's own shell
        e = dict(os.environ, PATH=self.bin.name + os.pathsep + os.environ["PATH"])
        e.pop("CALL_START", None)
        asked = int(time.time()) - 60
        # (inside a shell 2 s older, that is not the command's)
        inner = 'sleep 3; exec bash "%s" %d 1800 3200' % (SCRIPT, asked)
        r = subprocess.run(["bash", "-c", "sleep 2; bash -c '%s'; true" % inner], capture_output=True, text=True, env=e)
        seconds = int(next(x for x in r.stdout.splitlines() if x.startswith("timeout ")).split()[1])
        self.assertIn(seconds, (581, 582))

    def test_start_counts_at_least_forty_seconds(self):
        # a clock that says no time passed still books the shortest start seen
        _, late = self.call(0, 600)
        _, seen = self.call(40, 600)
        self.assertLessEqual(abs(late[0] - seen[0]), 1)
        self.assertEqual(late[1:], seen[1:])

    def test_declines_under_six_minutes(self):
        rc, args = self.call(110, 600)  # 475 s left: 6.0 minutes after the margin
        self.assertEqual(rc, 0)
        self.assertAlmostEqual(args[1], 6.0, delta=0.05)
        rc, args = self.call(120, 600)  # 465 s left: 5.8 minutes
        self.assertNotEqual(rc, 0)
        self.assertIsNone(args)
        rc, args = self.call(160, 600, MIN_DIT="5")
        self.assertEqual(rc, 0)


if __name__ == "__main__":
    unittest.main()
