using System.Collections;
using System.Diagnostics.CodeAnalysis;
using System.Text.Json;

namespace Jackdaw.Client.Session;

/// <summary>
/// A document's <c>@metadata</c> as the session sees it. Strings, numbers (long or double), booleans
/// and null come as .NET values, nested objects and arrays as <see cref="JsonElement"/>. Changing it
/// marks the document as changed, so the next <c>SaveChangesAsync</c> sends it.
/// </summary>
public sealed class MetadataDictionary : IDictionary<string, object?>
{
    private readonly Dictionary<string, object?> _values = new(StringComparer.Ordinal);

    internal MetadataDictionary(JsonElement? loaded, string collection, string clrTypeName)
    {
        if (loaded is { ValueKind: JsonValueKind.Object } element)
        {
            foreach (var property in element.EnumerateObject())
            {
                _values[property.Name] = ToValue(property.Value);
            }
        }

        _values.TryAdd(MetadataKeys.Collection, collection);
        _values.TryAdd(MetadataKeys.ClrType, clrTypeName);
    }

    /// <summary>The metadata exactly as received (a streamed result's): no entries added.</summary>
    internal MetadataDictionary(JsonElement? received)
    {
        if (received is { ValueKind: JsonValueKind.Object } element)
        {
            foreach (var property in element.EnumerateObject())
            {
                _values[property.Name] = ToValue(property.Value);
            }
        }
    }

    /// <summary>True once the user changed an entry.</summary>
    internal bool IsDirty { get; set; }

    public ICollection<string> Keys => _values.Keys;

    public ICollection<object?> Values => _values.Values;

    public int Count => _values.Count;

    public bool IsReadOnly => false;

    public object? this[string key]
    {
        get => _values[key];
        set
        {
            _values[key] = value;
            IsDirty = true;
        }
    }

    /// <summary>The entry as a string, or null when absent or not a string.</summary>
    public string? GetString(string key) => _values.TryGetValue(key, out var value) ? value as string : null;

    public void Add(string key, object? value)
    {
        _values.Add(key, value);
        IsDirty = true;
    }

    public bool Remove(string key)
    {
        var removed = _values.Remove(key);
        IsDirty |= removed;
        return removed;
    }

    public bool ContainsKey(string key) => _values.ContainsKey(key);

    public bool TryGetValue(string key, [MaybeNullWhen(false)] out object? value) => _values.TryGetValue(key, out value);

    public void Clear()
    {
        _values.Clear();
        IsDirty = true;
    }

    void ICollection<KeyValuePair<string, object?>>.Add(KeyValuePair<string, object?> item) => Add(item.Key, item.Value);

    bool ICollection<KeyValuePair<string, object?>>.Contains(KeyValuePair<string, object?> item) => ((ICollection<KeyValuePair<string, object?>>)_values).Contains(item);

    void ICollection<KeyValuePair<string, object?>>.CopyTo(KeyValuePair<string, object?>[] array, int arrayIndex) => ((ICollection<KeyValuePair<string, object?>>)_values).CopyTo(array, arrayIndex);

    bool ICollection<KeyValuePair<string, object?>>.Remove(KeyValuePair<string, object?> item)
    {
        var removed = ((ICollection<KeyValuePair<string, object?>>)_values).Remove(item);
        IsDirty |= removed;
        return removed;
    }

    public IEnumerator<KeyValuePair<string, object?>> GetEnumerator() => _values.GetEnumerator();

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

    /// <summary>Takes the server-managed values of a write's result without marking the metadata dirty.</summary>
    internal void SetServerValue(string key, object? value) => _values[key] = value;

    private static object? ToValue(JsonElement value) => value.ValueKind switch
    {
        JsonValueKind.String => value.GetString(),
        JsonValueKind.Number => value.TryGetInt64(out var l) ? l : value.GetDouble(),
        JsonValueKind.True => true,
        JsonValueKind.False => false,
        JsonValueKind.Null or JsonValueKind.Undefined => null,
        _ => value.Clone(),
    };
}
