"""Refusal classification and the retry-after parser, in memory."""

import random
import unittest

from sparrowfleet import errors
from sparrowfleet._gen.sparrowrpc import constants
from sparrowfleet._gen.sparrowrpc.ttypes import IncompleteRequestException

SATURATED_TEXT = ("fleet saturated: node monitors refused request \"r\"'s reservations as full and "
                  "the hold is over; retry after 2s")
DRAINING_TEXT = "fleet saturated: this scheduler is shutting down and accepts no new jobs; retry after 500ms"


class RefusalErrorTest(unittest.TestCase):
    def test_classification(self):
        cases = [
            # (name, code, retryAfterMs, message, class, retry_after, draining)
            ("text saturated", None, None, SATURATED_TEXT, errors.SaturatedError, 2.0, False),
            ("text draining", None, None, DRAINING_TEXT, errors.SaturatedError, 0.5, True),
            ("text retry-after only", None, None, "busy; retry after 1.5", errors.SaturatedError, 1.5, False),
            ("text unknown app", None, None, 'no live node monitor hosts app "wc"', errors.UnknownAppError, None, None),
            ("text unplaceable", None, None, "no live node monitor satisfies the job's constraints",
             errors.UnplaceableError, None, None),
            ("text invalid", None, None, "duplicate task id \"0\"", errors.InvalidRequestError, None, None),
            ("code saturated", constants.REFUSAL_SATURATED, 1200, "full", errors.SaturatedError, 1.2, False),
            ("code saturated, delay from text", constants.REFUSAL_SATURATED, None, "full; retry after 3s",
             errors.SaturatedError, 3.0, False),
            ("code draining", constants.REFUSAL_DRAINING, 250, "going away", errors.SaturatedError, 0.25, True),
            ("code unknown app", constants.REFUSAL_UNKNOWN_APP, None, "whatever", errors.UnknownAppError, None, None),
            ("code unplaceable", constants.REFUSAL_UNPLACEABLE, None, "fleet saturated", errors.UnplaceableError,
             None, None),
            ("code invalid beats text", constants.REFUSAL_INVALID, None, SATURATED_TEXT,
             errors.InvalidRequestError, None, None),
            ("unknown code falls back to text", 99, None, 'no live node monitor hosts app "wc"',
             errors.UnknownAppError, None, None),
            ("out-of-range delay ignored", constants.REFUSAL_SATURATED, 10**9, "full", errors.SaturatedError,
             0.0, False),
        ]
        for name, code, after_ms, msg, cls, retry_after, draining in cases:
            with self.subTest(name):
                exc = IncompleteRequestException(message=msg, code=code, retryAfterMs=after_ms)
                err = errors.refusal_error("127.0.0.1:20503", "req-1", "wc", exc)
                self.assertIs(type(err), cls)
                self.assertEqual(err.message, msg)
                self.assertEqual(err.request_id, "req-1")
                self.assertEqual(err.scheduler, "127.0.0.1:20503")
                self.assertIn("refused by scheduler 127.0.0.1:20503", str(err))
                if retry_after is not None:
                    self.assertAlmostEqual(err.retry_after, retry_after)
                    self.assertEqual(err.scheduler_draining, draining)
                if cls is errors.UnknownAppError:
                    self.assertEqual(err.app, "wc")


class ParseRetryAfterTest(unittest.TestCase):
    def test_table(self):
        cases = [
            ("retry after 2s", 2.0),
            ("retry after 2", 2.0),
            ("Retry After 1.5s.", 1.5),
            ("RETRY AFTER 250ms; more", 0.25),
            ("retry after 1m30s", 90.0),
            ("retry after 1s, then retry after 3s", 3.0),
            ("x (retry after 4s)", 4.0),
            ('"retry after 7s"', 7.0),
            ("retry after 0", 0.0),
            ("retry after 300s", 300.0),
            ("retry after 301s", None),
            ("retry after 6m", None),
            ("retry after -1s", None),
            ("retry after inf", None),
            ("retry after 0x10", None),
            ("retry after 1_0", None),
            ("retry after soon", None),
            ("retry after ", None),
            ("retry after ...", None),
            ("nothing to see", None),
            ("", None),
        ]
        for msg, want in cases:
            with self.subTest(msg):
                got = errors.parse_retry_after(msg)
                if want is None:
                    self.assertIsNone(got)
                else:
                    self.assertAlmostEqual(got, want)

    def test_random_input_stays_in_bounds(self):
        # The parser reads schedulers' free text: whatever it is, the answer
        # is None or a delay within the bound, never an exception.
        rng = random.Random(1)
        alphabet = "retry afte RETRY0123456789.,;:-+smhnuµμ \t\n\"')]xXpPiInN_é"
        for _ in range(5000):
            msg = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
            if rng.random() < 0.5:
                msg = msg[: len(msg) // 2] + "retry after " + msg[len(msg) // 2:]
            got = errors.parse_retry_after(msg)
            self.assertTrue(got is None or 0 <= got <= errors.MAX_SUGGESTED_SECONDS, (msg, got))


if __name__ == "__main__":
    unittest.main()
