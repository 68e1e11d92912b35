"""The tracker's in-memory state: issues and their comments, seeded with two issues."""

from typing import Literal

from pydantic import BaseModel, Field

IssueStatus = Literal["open", "closed"]


class Issue(BaseModel):
    id: int
    title: str
    body: str = ""
    status: IssueStatus = "open"
    comments: list[str] = Field(default_factory=list)


class UnknownIssue(LookupError):
    pass


class Tracker:
    def __init__(self) -> None:
        self._issues: dict[int, Issue] = {}
        self._next_id = 1

    @classmethod
    def seeded(cls) -> "Tracker":
        tracker = cls()
        tracker.create("Login page times out", "Users on slow links see a 504 after 30 s.")
        tracker.create("Export drops the last row", "CSV export omits the final line.")
        return tracker

    def list(self, status: IssueStatus | None = None) -> list[Issue]:
        return [issue for issue in self._issues.values() if status in (None, issue.status)]

    def get(self, issue_id: int) -> Issue:
        try:
            return self._issues[issue_id]
        except KeyError:
            raise UnknownIssue(f"no issue #{issue_id}") from None

    def create(self, title: str, body: str = "") -> Issue:
        issue = Issue(id=self._next_id, title=title, body=body)
        self._issues[issue.id] = issue
        self._next_id += 1
        return issue

    def comment(self, issue_id: int, text: str) -> Issue:
        issue = self.get(issue_id)
        issue.comments.append(text)
        return issue
