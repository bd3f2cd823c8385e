import unittest

from roman import from_roman, to_roman


class HiddenRoman(unittest.TestCase):
    def test_known_values(self):
        for n, text in [(1, "I"), (4, "IV"), (9, "IX"), (14, "XIV"), (40, "XL"),
                        (90, "XC"), (400, "CD"), (1994, "MCMXCIV"), (3999, "MMMCMXCIX")]:
            self.assertEqual(to_roman(n), text)
            self.assertEqual(from_roman(text), n)

    def test_round_trip(self):
        for n in range(1, 4000):
            self.assertEqual(from_roman(to_roman(n)), n)

    def test_out_of_range(self):
        for n in (0, -1, 4000):
            with self.assertRaises(ValueError):
                to_roman(n)

    def test_invalid_numerals(self):
        for text in ("", "IIII", "MMMM", "IM", "VV", "ABC"):
            with self.assertRaises(ValueError):
                from_roman(text)


if __name__ == "__main__":
    unittest.main()
