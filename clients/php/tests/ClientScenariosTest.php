<?php

declare(strict_types=1);

namespace Lectern\Tests;

use Lectern\Collection;
use Lectern\Exception\AuthenticationException;
use Lectern\Exception\InvalidRequestException;
use Lectern\Exception\LecternException;
use Lectern\Exception\NotFoundException;
use Lectern\Exception\PermissionException;
use Lectern\Exception\RateLimitException;
use Lectern\Exception\ServerException;
use Lectern\Exception\ServiceUnavailableException;
use Lectern\FormDetail;
use Lectern\Lectern;
use Lectern\SyncResult;
use Lectern\Tests\Support\TestServer;
use PHPUnit\Framework\TestCase;

/**
 * Runs every scenario of spec/client-scenarios.json (the contract all three clients share) against
 * the Lectern test server, with the client's canonical options and arguments as PHP named arguments.
 */
final class ClientScenariosTest extends TestCase
{
    private const EXCEPTION_BY_KIND = [
        'authentication' => AuthenticationException::class,
        'permission' => PermissionException::class,
        'not_found' => NotFoundException::class,
        'invalid_request' => InvalidRequestException::class,
        'rate_limit' => RateLimitException::class,
        'unavailable' => ServiceUnavailableException::class,
        'server' => ServerException::class,
    ];

    /** @return iterable<string, array{array<string, mixed>}> */
    public function scenarios(): iterable
    {
        foreach (TestServer::spec('client-scenarios.json')['scenarios'] as $scenario) {
            yield $scenario['name'] => [$scenario];
        }
    }

    /**
     * @dataProvider scenarios
     *
     * @param array<string, mixed> $scenario
     */
    public function testScenario(array $scenario): void
    {
        $launcher = TestServer::launcher();
        $this->assertArrayHasKey($scenario['key'], $launcher['keys'], 'the scenario names a key the test server made');
        $lectern = new Lectern($launcher['baseUrl'], $launcher['keys'][$scenario['key']], ...($scenario['client'] ?? []));
        $saved = [];
        foreach ($scenario['steps'] as $number => $step) {
            $step['args'] = self::resolve($step['args'] ?? [], $saved);
            $times = $step['times'] ?? 1;
            for ($run = 1; $run <= $times; ++$run) {
                $where = \sprintf('step %d (%s), run %d', $number + 1, $step['call'], $run);
                $expect = $step['expect'] ?? null;
                if (isset($step['expectLast'])) {
                    $expect = $run === $times ? $step['expectLast'] : [];
                }
                $kept = $this->runStep($lectern, $step, self::resolve($expect ?? [], $saved), $where);
                if (isset($step['save']) && $kept !== null) {
                    $saved[$step['save']] = $kept;
                }
            }
        }
    }

    /**
     * `$name` in an argument or an expectation stands for what an earlier step saved as `name`.
     *
     * @param array<string, string> $saved
     */
    private static function resolve(mixed $value, array $saved): mixed
    {
        if (\is_string($value) && str_starts_with($value, '$')) {
            if (!\array_key_exists(substr($value, 1), $saved)) {
                throw new \LogicException("nothing saved as $value before it is used");
            }

            return $saved[substr($value, 1)];
        }

        return \is_array($value) ? array_map(static fn ($one) => self::resolve($one, $saved), $value) : $value;
    }

    /** Posts a submission the way a site's form does (no key), as `intake.submit` asks; its id. */
    private function submit(string $formId, mixed $data): string
    {
        $context = stream_context_create(['http' => [
            'method' => 'POST',
            'header' => "Content-Type: application/json\r\nAccept: application/json\r\n",
            'content' => json_encode($data, \JSON_THROW_ON_ERROR),
            'ignore_errors' => true,
        ]]);
        $body = file_get_contents(TestServer::launcher()['baseUrl'] . '/f/' . rawurlencode($formId), false, $context);
        $this->assertIsString($body);
        $this->assertStringContainsString(' 201', $http_response_header[0] ?? '', "intake.submit: $body");

        return json_decode($body, true, 512, \JSON_THROW_ON_ERROR)['id'];
    }

    /**
     * Runs one step and checks it; what it keeps for a later step's `$name`, if anything.
     *
     * @param array<string, mixed> $step
     * @param array<string, mixed> $expect
     */
    private function runStep(Lectern $lectern, array $step, array $expect, string $where): ?string
    {
        if ($step['call'] === 'intake.submit') {
            return $this->submit($step['args']['formId'], $step['args']['data']);
        }
        if ($step['call'] === 'clock.wait') {
            usleep($step['args']['milliseconds'] * 1000);

            return null;
        }
        [$resource, $method] = explode('.', $step['call']);
        $args = $step['args'] ?? [];
        $positional = [];
        if (\array_key_exists('formId', $args)) {
            $positional[] = $args['formId'];
            unset($args['formId']);
        }
        try {
            $result = $lectern->{$resource}->{$method}(...$positional, ...$args);
            $items = match (true) {
                $result instanceof Collection => $result->data,
                $result instanceof FormDetail => [$result],
                $result instanceof SyncResult => $result->items,
                default => iterator_to_array($result, false),
            };
        } catch (LecternException $error) {
            if (!isset($expect['error'])) {
                throw $error;
            }
            $this->assertError($expect['error'], $error, $where);
            $this->assertResponse($lectern, $expect, $where);

            return null;
        }
        $this->assertArrayNotHasKey('error', $expect, "$where: expected an error, got a result");
        if (isset($expect['ids'])) {
            $this->assertSame($expect['ids'], array_map(static fn ($item) => $item->id, $items), "$where: ids");
        }
        if (isset($expect['items'])) {
            $this->assertSame($expect['items'], array_map(static fn ($item) => $item->toArray(), $items), "$where: items");
        }
        if (isset($expect['item'])) {
            $this->assertInstanceOf(FormDetail::class, $result, "$where: only a get returns one item");
            $item = self::withBaseUrl($expect['item'], TestServer::launcher()['baseUrl']);
            $this->assertSame($item, $result->toArray(), "$where: item");
            $this->assertSame($item['intake']['url'], $result->intake->url, "$where: intake url");
            $this->assertSame(array_column($item['fields'], 'maxLength'), array_map(static fn ($field) => $field->maxLength, $result->fields), "$where: maxLength");
        }
        if (isset($expect['meta'])) {
            $this->assertInstanceOf(Collection::class, $result, "$where: only a page has meta");
            $this->assertSame($expect['meta'], $result->meta->toArray(), "$where: meta");
        }
        if (isset($expect['until'])) {
            $this->assertInstanceOf(SyncResult::class, $result, "$where: only a sync returns until");
            $this->assertSame($expect['until'], $result->until, "$where: until");
        }
        $this->assertResponse($lectern, $expect, $where);

        return $result instanceof SyncResult ? $result->until : null;
    }

    /** `{baseUrl}` in an expected value stands for the test server's address. */
    private static function withBaseUrl(mixed $value, string $baseUrl): mixed
    {
        if (\is_string($value)) {
            return str_replace('{baseUrl}', $baseUrl, $value);
        }

        return \is_array($value) ? array_map(static fn ($one) => self::withBaseUrl($one, $baseUrl), $value) : $value;
    }

    /**
     * @param array<string, mixed> $expected
     */
    private function assertError(array $expected, LecternException $error, string $where): void
    {
        if (isset($expected['kind'])) {
            $this->assertInstanceOf(self::EXCEPTION_BY_KIND[$expected['kind']], $error, "$where: kind");
        }
        if (isset($expected['type'])) {
            $this->assertSame($expected['type'], $error->getType(), "$where: type");
        }
        if (isset($expected['status'])) {
            $this->assertSame($expected['status'], $error->status, "$where: status");
        }
        if (isset($expected['messageContains'])) {
            $this->assertStringContainsString($expected['messageContains'], $error->getMessage(), "$where: message");
        }
        $this->assertNotNull($error->requestId, "$where: every response carries X-Request-Id");
    }

    /**
     * @param array<string, mixed> $expect
     */
    private function assertResponse(Lectern $lectern, array $expect, string $where): void
    {
        if (isset($expect['lastStatus'])) {
            $this->assertSame($expect['lastStatus'], $lectern->lastResponse?->status, "$where: lastStatus");
        }
        if (isset($expect['rateLimit'])) {
            $rateLimit = $lectern->lastResponse?->rateLimit;
            $this->assertNotNull($rateLimit, "$where: rate-limit state");
            if (isset($expect['rateLimit']['limit'])) {
                $this->assertSame($expect['rateLimit']['limit'], $rateLimit->limit, "$where: rateLimit.limit");
            }
            if (isset($expect['rateLimit']['remainingBelow'])) {
                $this->assertLessThan($expect['rateLimit']['remainingBelow'], $rateLimit->remaining, "$where: rateLimit.remaining");
            }
        }
    }
}
