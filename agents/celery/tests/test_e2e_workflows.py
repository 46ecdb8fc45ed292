"""End to end: Celery canvases through a real worker and the agent, as jobwatch's trees.

A chain of three tasks, and a chord over a group of five run after a first task, one member
failing: jobwatch links each task to the one Celery names as its parent and root, and the
workflow route gives the tree and its totals.
"""
import uuid

import pytest
from celery import chain, chord

from e2e_harness import logs_on_failure, started_cluster, wait_for

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    yield from started_cluster(tmp_path_factory, "celery-workflows")


@pytest.fixture(autouse=True)
def show_logs_on_failure(request, cluster):
    yield from logs_on_failure(request, cluster)


def finished_jobs(cluster, external_ids):
    """The jobs by externalId once every one of them has finished in jobwatch, else None."""
    jobs = {job["externalId"]: job for job in cluster.jobwatch.jobs()}
    if not all(jobs.get(external_id, {}).get("state") in ("completed", "failed") for external_id in external_ids):
        return None
    return jobs


def test_a_chain_of_three_tasks_is_a_line_of_parents_under_its_root(cluster):
    app = cluster.app
    result = chain(app.add.s(1, 1), app.add.s(2), app.add.s(3)).delay()
    assert result.get(timeout=30) == 7
    third, second, first = result.id, result.parent.id, result.parent.parent.id
    jobs = wait_for(lambda: finished_jobs(cluster, [first, second, third]), 20, "the chain's three tasks finished in jobwatch")
    ids = {external_id: jobs[external_id]["id"] for external_id in (first, second, third)}
    assert [jobs[first]["parentId"], jobs[second]["parentId"], jobs[third]["parentId"]] == [None, ids[first], ids[second]]
    assert {jobs[external_id]["rootId"] for external_id in ids} == {ids[first]}
    workflow = cluster.jobwatch.call("GET", f"/api/jobs/{ids[third]}/workflow")
    assert [(node["externalId"], node["depth"], node["edge"]) for node in workflow["nodes"]] == [(first, 0, None), (second, 1, "parent"), (third, 2, "parent")]
    assert workflow["totals"]["completed"] == 3 and workflow["stuck"] == [] and workflow["truncated"] is None
    children = cluster.jobwatch.call("GET", f"/api/jobs?parentId={ids[first]}")["data"]
    assert [job["externalId"] for job in children] == [second]


def test_a_chord_over_a_group_of_five_with_a_failing_member_hangs_under_the_task_before_it(cluster):
    app = cluster.app
    members = [app.add.si(i, i) for i in range(4)] + [app.boom.si("member failed")]
    first = str(uuid.uuid4())
    result = chain(app.add.si(10, 10).set(task_id=first), chord(members, app.total.s())).delay()
    with pytest.raises(Exception):
        result.get(timeout=30)  # the chord's callback is never run: a member failed

    def five_members():
        jobs = {job["externalId"]: job for job in cluster.jobwatch.jobs()}
        root = jobs.get(first)
        if root is None:
            return None
        members = [job for job in jobs.values() if job["parentId"] == root["id"]]
        return (root, members) if len(members) == 5 and all(job["state"] in ("completed", "failed") for job in members) else None

    root, members_seen = wait_for(five_members, 20, "the chord's five members finished under the first task")
    assert sorted(job["name"] for job in members_seen) == ["e2e_app.add"] * 4 + ["e2e_app.boom"]
    assert {job["rootId"] for job in members_seen} == {root["id"]}
    workflow = cluster.jobwatch.call("GET", f"/api/jobs/{members_seen[0]['id']}/workflow")
    assert workflow["rootId"] == root["id"]
    assert [node["depth"] for node in workflow["nodes"]] == [0, 1, 1, 1, 1, 1]
    assert workflow["totals"]["completed"] == 5 and workflow["totals"]["failed"] == 1
    failed = cluster.jobwatch.call("GET", f"/api/jobs?rootId={root['id']}&state=failed")
    assert [job["name"] for job in failed["data"]] == ["e2e_app.boom"] and failed["pagination"]["total"] == 1
