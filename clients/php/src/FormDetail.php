<?php

declare(strict_types=1);

namespace Lectern;

/**
 * One form with its field definitions and intake address (`GET /api/v1/forms/{id}`), so a site
 * can render it.
 */
final class FormDetail implements \JsonSerializable
{
    /**
     * @param list<FormField> $fields the fields the form expects, in order; empty when it defines none
     */
    public function __construct(
        public readonly string $id,
        public readonly string $title,
        public readonly ?string $description,
        public readonly array $fields,
        public readonly FormIntake $intake,
    ) {
    }

    /**
     * @param array<string, mixed> $item the form as the API sends it
     *
     * @throws \TypeError when it does not have the API's shape
     */
    public static function fromArray(array $item): self
    {
        $fields = $item['fields'] ?? null;
        if (!\is_array($fields) || !array_is_list($fields)) {
            throw new \TypeError('a form needs a `fields` list');
        }

        return new self(
            $item['id'] ?? null,
            $item['title'] ?? null,
            $item['description'] ?? null,
            array_map(static fn ($field): FormField => FormField::fromArray($field), $fields),
            FormIntake::fromArray($item['intake'] ?? null),
        );
    }

    /** @return array<string, mixed> the API's fields, in its order, nested objects as arrays */
    public function toArray(): array
    {
        return [
            'id' => $this->id,
            'title' => $this->title,
            'description' => $this->description,
            'fields' => array_map(static fn (FormField $field): array => $field->toArray(), $this->fields),
            'intake' => $this->intake->toArray(),
        ];
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return $this->toArray();
    }
}
