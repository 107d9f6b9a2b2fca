<?php

declare(strict_types=1);

namespace Lectern\Tests;

use Lectern\Exception\RateLimitException;
use Lectern\Exception\ServerException;
use Lectern\Exception\ServiceUnavailableException;
use Lectern\Lectern;
use Lectern\Tests\Support\FakeClock;
use Lectern\Tests\Support\ScriptedApi;
use Lectern\Tests\Support\TestServer;
use PHPUnit\Framework\TestCase;

/** Retries of 429 and 503, timed by a fake clock (no test here really sleeps) with a fixed jitter. */
final class RetryTest extends TestCase
{
    private FakeClock $clock;

    protected function setUp(): void
    {
        $this->clock = new FakeClock();
    }

    /** @param array<string, mixed> $options */
    private function client(string $baseUrl, array $options = [], float $jitter = 0.25): Lectern
    {
        return new Lectern($baseUrl, 'lk_live_test', ...$options, sleep: $this->clock->sleep(...), random: static fn (): float => $jitter);
    }

    private static function busy(?string $retryAfter = '1'): array
    {
        return ['status' => 429, 'headers' => array_filter(['Retry-After' => $retryAfter, 'X-Request-Id' => 'req_busy']), 'body' => ScriptedApi::error('rate_limit_exceeded', 'Rate limit exceeded, try again later')];
    }

    private static function unavailable(?string $retryAfter = null): array
    {
        return ['status' => 503, 'headers' => array_filter(['Retry-After' => $retryAfter, 'X-Request-Id' => 'req_down']), 'body' => ScriptedApi::error('service_unavailable', 'The database cannot be reached')];
    }

    private static function ok(): array
    {
        return ['status' => 200, 'body' => ScriptedApi::formsPage('form_a')];
    }

    public function testItWaitsTheRetryAfterOfA429PlusJitterThenSucceeds(): void
    {
        $api = ScriptedApi::get();
        $url = $api->script([self::busy('2'), self::ok()]);

        $forms = $this->client($url)->forms->list();

        $this->assertSame(['form_a'], array_map(static fn ($f) => $f->id, $forms->data));
        // 2 s asked for, plus jitter of 0.25 × the base delay (0.5 s).
        $this->assertEqualsWithDelta([2.125], $this->clock->sleeps, 1e-9);
        $this->assertCount(2, $api->requests($url));
    }

    public function testItBacksOffExponentiallyWithEqualJitterOnA503WithoutRetryAfter(): void
    {
        $url = ScriptedApi::get()->script([self::unavailable(), self::unavailable(), self::unavailable(), self::ok()]);

        $this->client($url, ['maxRetries' => 3], jitter: 0.5)->forms->list();

        // base × 2^attempt × (0.5 + 0.5 / 2): 0.5, 1 and 2 seconds, each × 0.75.
        $this->assertEqualsWithDelta([0.375, 0.75, 1.5], $this->clock->sleeps, 1e-9);
    }

    public function testTheBackOffNeverExceedsTheMaximumDelay(): void
    {
        $url = ScriptedApi::get()->script([self::unavailable(), self::unavailable(), self::unavailable(), self::ok()]);

        $this->client($url, ['maxRetries' => 3, 'baseRetryDelay' => 4.0, 'maxRetryDelay' => 6.0], jitter: 0.999)->forms->list();

        $this->assertCount(3, $this->clock->sleeps);
        foreach ($this->clock->sleeps as $sleep) {
            $this->assertLessThanOrEqual(6.0, $sleep);
        }
        $this->assertEqualsWithDelta(4 * (0.5 + 0.999 / 2), $this->clock->sleeps[0], 1e-9);
    }

    public function testItHonoursTheRetryAfterOfA503(): void
    {
        $url = ScriptedApi::get()->script([self::unavailable('3'), self::ok()]);

        $this->client($url, jitter: 0.0)->forms->list();

        $this->assertEqualsWithDelta([3.0], $this->clock->sleeps, 1e-9);
    }

    public function testItGivesUpAfterMaxRetriesAndThrowsTheLastError(): void
    {
        $api = ScriptedApi::get();
        $url = $api->script([self::unavailable('1'), self::unavailable('1'), self::unavailable('1'), self::ok()]);

        try {
            $this->client($url)->forms->list();
            $this->fail('expected a ServiceUnavailableException');
        } catch (ServiceUnavailableException $error) {
            $this->assertSame('service_unavailable', $error->getType());
            $this->assertSame(503, $error->status);
            $this->assertSame(1, $error->retryAfter);
            $this->assertSame('req_down', $error->requestId);
        }
        $this->assertCount(2, $this->clock->sleeps, 'two retries by default');
        $this->assertCount(3, $api->requests($url));
    }

    public function testItDoesNotWaitForARetryAfterLongerThanTheMaximumDelay(): void
    {
        $api = ScriptedApi::get();
        $url = $api->script([self::busy('1800'), self::ok()]);

        try {
            $this->client($url)->forms->list();
            $this->fail('expected a RateLimitException');
        } catch (RateLimitException $error) {
            $this->assertSame(1800, $error->getRetryAfter(), 'the caller learns when to come back');
        }
        $this->assertSame([], $this->clock->sleeps);
        $this->assertCount(1, $api->requests($url));
    }

    public function testItReadsARetryAfterGivenAsAnHttpDate(): void
    {
        $url = ScriptedApi::get()->script([self::busy(gmdate('D, d M Y H:i:s', time() + 120) . ' GMT'), self::ok()]);

        try {
            $this->client($url)->forms->list();
            $this->fail('expected a RateLimitException');
        } catch (RateLimitException $error) {
            $this->assertGreaterThanOrEqual(118, $error->retryAfter);
            $this->assertLessThanOrEqual(120, $error->retryAfter);
        }
    }

    public function testItNeverRetriesWhenMaxRetriesIsZero(): void
    {
        $api = ScriptedApi::get();
        $url = $api->script([self::busy(), self::ok()]);

        $this->expectException(RateLimitException::class);
        try {
            $this->client($url, ['maxRetries' => 0])->forms->list();
        } finally {
            $this->assertSame([], $this->clock->sleeps);
            $this->assertCount(1, $api->requests($url));
        }
    }

    public function testItDoesNotRetryAServerError(): void
    {
        $api = ScriptedApi::get();
        $url = $api->script([['status' => 500, 'body' => ScriptedApi::error('internal_error', 'Internal server error')], self::ok()]);

        $this->expectException(ServerException::class);
        try {
            $this->client($url)->forms->list();
        } finally {
            $this->assertSame([], $this->clock->sleeps);
            $this->assertCount(1, $api->requests($url));
        }
    }

    public function testItRetriesTheRealServersBurstLimitAfterItsRetryAfter(): void
    {
        $launcher = TestServer::launcher();
        $lectern = new Lectern($launcher['baseUrl'], $launcher['keys']['burst'], maxRetries: 2, sleep: $this->clock->sleep(...), random: static fn (): float => 0.5);
        // The scenarios use this key too: leave its rolling one-second window empty before and after.
        usleep(1_100_000);
        // The fake clock does not wait, so the server is still over its burst limit on every retry.
        for ($i = 0; $i < 10; ++$i) {
            $lectern->redirects->list(pageSize: 1);
        }

        try {
            $lectern->redirects->list(pageSize: 1);
            $this->fail('expected a RateLimitException');
        } catch (RateLimitException $error) {
            $this->assertSame('rate_limit_exceeded', $error->type);
            $this->assertNotNull($error->retryAfter);
        }
        $this->assertCount(2, $this->clock->sleeps);
        foreach ($this->clock->sleeps as $sleep) {
            $this->assertEqualsWithDelta($error->retryAfter + 0.25, $sleep, 1e-9);
        }
        usleep(1_100_000);
    }
}
