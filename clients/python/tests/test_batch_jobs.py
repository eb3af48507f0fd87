"""Batch and jobs against the service's contract:
POST /api/v1/batch → data.items in request order; POST /api/v1/jobs → 202,
data.id job_…, Location; GET /api/v1/jobs/{id}?wait=N; GET …/events (SSE
`item`, `done`)."""

from mediaparse import AsyncClient, Client
from conftest import UNSUPPORTED

def test_a_batch_answers_each_item_in_order_and_charges_the_successes(base_url, token, post_url):
    with Client(base_url, token) as mp:
        batch = mp.batch([post_url, {"url": post_url, "platform": "tiktok"}, UNSUPPORTED])
    assert [i.status for i in batch.items] == [200, 200, 400]
    assert batch.items[0].media.platform == "tiktok"
    assert "platformData" in batch.items[1].data
    assert batch.items[2].code == "302" and batch.items[2].media is None
    assert batch.credits_charged == 2


def test_a_job_is_created_waited_for_and_streamed(base_url, token, post_url):
    with Client(base_url, token) as mp:
        job = mp.create_job([post_url, UNSUPPORTED])
        assert job.id.startswith("job_")
        assert job.state in ("queued", "running", "done")
        assert job.location and job.location.endswith(f"/api/v1/jobs/{job.id}")
        done = mp.wait_job(job.id, timeout=120)
        assert done.done and done.id == job.id
        assert [i.status for i in done.items] == [200, 400]
        events = list(mp.job_events(job.id))
    assert events[-1].event == "done"
    assert sum(1 for e in events if e.event == "item") == 2


async def test_the_async_client_runs_a_job(base_url, token, post_url):
    async with AsyncClient(base_url, token) as mp:
        job = await mp.create_job([post_url])
        done = await mp.wait_job(job.id, timeout=120)
        events = [e async for e in mp.job_events(job.id)]
    assert done.done and done.items[0].ok
    assert events[-1].event == "done"
