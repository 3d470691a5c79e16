from django.urls import path

from kandev_web.board.consumers import BoardConsumer
from kandev_web.sessions.consumers import TaskConsumer

websocket_urlpatterns = [
    path("ws/boards/<int:board_id>/", BoardConsumer.as_asgi()),
    path("ws/tasks/<int:task_id>/", TaskConsumer.as_asgi()),
]
