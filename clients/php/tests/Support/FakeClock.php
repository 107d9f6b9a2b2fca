<?php

declare(strict_types=1);

namespace Lectern\Tests\Support;

/** A clock that never sleeps: it records each wait and moves its time on by it. */
final class FakeClock
{
    /** @var list<float> */
    public array $sleeps = [];

    public function __construct(public float $now = 1_700_000_000.0)
    {
    }

    public function sleep(float $seconds): void
    {
        $this->sleeps[] = $seconds;
        $this->now += $seconds;
    }

    public function time(): int
    {
        return (int) floor($this->now);
    }
}
