"""The lab's harness, in a source checkout only: not installed (pyproject's packages.find leaves
it out of the wheel) and imported by nothing that is (import-linter: "What is installed imports
nothing of the harness"). The tests and the lab's benchmarks (``tests/bench``) use it: a
venue's network in network namespaces (``netns``) with a delaying proxy for its Wi-Fi stalls
(``delay_proxy``), the simulated venue on that network with its faults and its checker
(``net_venue``), a three-node NATS cluster on ``deploy/cluster``'s configuration
(``nats_cluster``) and a private PostgreSQL (``postgres``).

What a user runs stays installed, with what it needs: ``tablectl sim`` (the simulated venue in
``tablectl/sim_venue.py``, the shoe, the scripted dealer and the Mosquitto launcher in
``simulators/``) and ``tablectl bench`` (``tablectl/bench/``, with ``simulators.staff``)."""
