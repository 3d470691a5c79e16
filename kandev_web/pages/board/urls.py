from django.urls import path

from . import views

app_name = "board"
urlpatterns = [
    path("", views.home, name="home"),
    path("boards/<int:board_id>/", views.board, name="board"),
    path("boards/<int:board_id>/tasks/", views.task_create, name="task-create"),
    path("boards/<int:board_id>/steps/<int:step_id>/cards/", views.column_more, name="column-more"),
    path("tasks/<int:task_id>/card/", views.task_card, name="task-card"),
    path("tasks/<int:task_id>/edit/", views.task_edit, name="task-edit"),
    path("tasks/<int:task_id>/move/", views.task_move, name="task-move"),
    path("tasks/<int:task_id>/delete/", views.task_delete, name="task-delete"),
]
