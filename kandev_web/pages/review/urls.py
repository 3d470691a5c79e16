"""The task's review page: its branch's whole diff, comments on its lines, the push and the forge's link."""

from django.urls import path

from . import views

app_name = "review"
urlpatterns = [
    path("tasks/<int:task_id>/review/", views.review, name="review"),
    path("tasks/<int:task_id>/review/lines/", views.more_lines, name="more-lines"),
    path("tasks/<int:task_id>/review/comments/", views.comment_add, name="comment-add"),
    path("tasks/<int:task_id>/review/comments/<int:comment_id>/delete/", views.comment_delete, name="comment-delete"),
    path("tasks/<int:task_id>/review/send/", views.send, name="send"),
    path("tasks/<int:task_id>/review/push/", views.push, name="push"),
]
