import unittest

from inventory import Inventory


class HiddenInventory(unittest.TestCase):
    def test_add_remove_count(self):
        stock = Inventory()
        stock.add("a", 5)
        stock.remove("a", 2)
        self.assertEqual(stock.count("a"), 3)
        self.assertEqual(stock.count("nothing"), 0)

    def test_refusals(self):
        stock = Inventory()
        with self.assertRaises(ValueError):
            stock.add("a", 0)
        with self.assertRaises(KeyError):
            stock.remove("b", 1)
        stock.add("a", 1)
        with self.assertRaises(ValueError):
            stock.remove("a", 2)
        self.assertEqual(stock.count("a"), 1)

    def test_low(self):
        stock = Inventory()
        for sku, n in [("c", 1), ("a", 2), ("b", 9)]:
            stock.add(sku, n)
        self.assertEqual(stock.low(5), ["a", "c"])

    def test_round_trip(self):
        stock = Inventory()
        stock.add("a", 4)
        again = Inventory.from_json(stock.to_json())
        self.assertEqual(again.count("a"), 4)


if __name__ == "__main__":
    unittest.main()
