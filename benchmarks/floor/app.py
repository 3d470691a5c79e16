"""The floor's page and consumer.

Every socket joins one group. Any frame a socket sends is a trigger: one
``group_send`` of a fragment carrying the frame's sequence number, which every
socket in the group (the page, and the trigger's own socket) is sent as is.
"""

from channels.generic.websocket import AsyncWebsocketConsumer
from django.http import HttpResponse
from django.templatetags.static import static
from django.urls import path

GROUP = "floor"
HTMX = "vendor/htmx/htmx-2.0.11.min.js"
HTMX_WS = "vendor/htmx-ext-ws/htmx-ext-ws-2.0.4.min.js"

#: As small as an out-of-band swap gets: one element appended to a list.
FRAGMENT = '<div hx-swap-oob="beforeend:#floor-marks"><span data-testid="floor-mark" data-seq="{seq}"></span></div>'

#: The observer is inline and runs before htmx loads, as the latency benchmark's
#: instrumentation does on the product's pages.
PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>framework floor</title>
  <script src="{htmx}" defer></script>
  <script src="{htmx_ws}" defer></script>
  <script>
    window.__floor = {{}};
    const MARK = "[data-testid=floor-mark]";
    new MutationObserver((records) => {{
      const t = performance.timeOrigin + performance.now();
      for (const record of records) for (const node of record.addedNodes) {{
        if (node.nodeType !== 1) continue;
        for (const mark of [node, ...node.querySelectorAll(MARK)]) {{
          if (mark.matches(MARK) && !(mark.dataset.seq in window.__floor)) window.__floor[mark.dataset.seq] = t;
        }}
      }}
    }}).observe(document, {{childList: true, subtree: true}});
    document.addEventListener("htmx:wsOpen", (event) => {{ event.detail.elt.dataset.live = "connected"; }});
  </script>
</head>
<body>
  <div hx-ext="ws" ws-connect="/ws/floor/" data-testid="floor-live" data-live="connecting">
    <div id="floor-marks" data-testid="floor-marks"></div>
  </div>
</body>
</html>
"""


def page(request):
    return HttpResponse(PAGE.format(htmx=static(HTMX), htmx_ws=static(HTMX_WS)))


class FloorConsumer(AsyncWebsocketConsumer):
    async def connect(self):
        await self.channel_layer.group_add(GROUP, self.channel_name)
        await self.accept()

    async def disconnect(self, code):
        await self.channel_layer.group_discard(GROUP, self.channel_name)

    async def receive(self, text_data=None, bytes_data=None):
        # int() keeps the fragment markup ours whatever a client sends.
        await self.channel_layer.group_send(GROUP, {"type": "floor.mark", "seq": int(text_data)})

    async def floor_mark(self, event):
        await self.send(text_data=FRAGMENT.format(seq=event["seq"]))


urlpatterns = [path("", page)]
websocket_urlpatterns = [path("ws/floor/", FloorConsumer.as_asgi())]
