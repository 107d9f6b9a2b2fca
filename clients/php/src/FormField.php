<?php

declare(strict_types=1);

namespace Lectern;

/**
 * A field a form expects (in {@see FormDetail}). `$type` is one of `text`, `textarea`, `email`,
 * `url`, `tel`, `number`, `date`, `checkbox`, `select`.
 */
final class FormField implements \JsonSerializable
{
    /**
     * @param list<string>|null $options   the values a `select` accepts; null for other types
     * @param int|null          $maxLength the most characters a value may have; null: no cap of its own
     */
    public function __construct(
        public readonly string $name,
        public readonly string $label,
        public readonly string $type,
        public readonly bool $required,
        public readonly ?array $options,
        public readonly ?int $maxLength,
    ) {
    }

    /** @param array<string, mixed> $item a field as the API sends it */
    public static function fromArray(array $item): self
    {
        $options = $item['options'] ?? null;

        return new self(
            $item['name'] ?? null,
            $item['label'] ?? null,
            $item['type'] ?? null,
            $item['required'] ?? null,
            \is_array($options) ? array_values(array_map(static fn ($option): string => $option, $options)) : $options,
            $item['maxLength'] ?? null,
        );
    }

    /** @return array{name: string, label: string, type: string, required: bool, options: list<string>|null, maxLength: int|null} the API's fields, in its order */
    public function toArray(): array
    {
        return [
            'name' => $this->name,
            'label' => $this->label,
            'type' => $this->type,
            'required' => $this->required,
            'options' => $this->options,
            'maxLength' => $this->maxLength,
        ];
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return $this->toArray();
    }
}
