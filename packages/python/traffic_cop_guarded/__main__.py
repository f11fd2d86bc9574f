"""`python -m traffic_cop_guarded`: the path of the WIT to build the app against."""

from traffic_cop_guarded import WIT

print(WIT)
