import subprocess
import sys
import unittest

from wordfreq import top_words


class HiddenWordfreq(unittest.TestCase):
    def test_counts_without_case(self):
        self.assertEqual(top_words("The cat and the hat. THE end", 1), [("the", 3)])

    def test_ties_alphabetical(self):
        self.assertEqual(top_words("b a c b a c d", 3), [("a", 2), ("b", 2), ("c", 2)])

    def test_apostrophes_are_letters(self):
        self.assertEqual(top_words("don't stop, don't", 1), [("don't", 2)])

    def test_nothing(self):
        self.assertEqual(top_words("", 3), [])
        self.assertEqual(top_words("a b", 0), [])

    def test_command_line(self):
        out = subprocess.run([sys.executable, "wordfreq.py", "2"], input="x y x z y x",
                             capture_output=True, text=True, check=True).stdout
        self.assertEqual(out.split("\n")[:2], ["x 3", "y 2"])


if __name__ == "__main__":
    unittest.main()
