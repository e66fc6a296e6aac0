"""The lab's benchmarks, run from a source checkout with the development extras: a venue on a
network in namespaces (``network``), the group's clustered engine (``multi_venue``), the shoe
firmware's heap on MicroPython (``shoe_memory``), and this checkout against another commit
(``versus``). The benchmarks a table or a hub runs are installed: ``tablectl bench``
(``tablectl/bench/``)."""
