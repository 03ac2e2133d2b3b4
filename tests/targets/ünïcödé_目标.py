"""Target: non-ASCII file, function, class and method names.

The main thread calls función_λ(), which calls Ñandú().método_π(), which
blocks.  On 3.11+ the method's qualified name, "Ñandú.método_π", is
non-ASCII as well.  The identifiers are in NFC form, which Python keeps
as written.
"""

import threading

from _fptarget import Spot, announce_when_parked

NUNCA = threading.Event()


class Ñandú:
    def método_π(self):
        NUNCA.wait()  # «espera» 🐍 @metodo


def función_λ():
    Ñandú().método_π()  # llamada → 目标 @funcion


if __name__ == "__main__":
    announce_when_parked([Spot(threading.main_thread(), __file__, "metodo")])
    función_λ()
