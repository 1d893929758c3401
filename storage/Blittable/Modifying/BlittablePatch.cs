using System.Text;

namespace Jackdaw.Storage.Blittable;

/// <summary>
/// Changes to apply to a document with <see cref="JsonOperationContext.Modify"/>: set, remove, or
/// descend into a nested object (created if absent). Setting an existing property keeps its
/// position; new properties are appended. The last change to a name wins. Reusable after <see cref="Clear"/>.
/// </summary>
public sealed class BlittablePatch
{
    internal enum OperationKind : byte
    {
        Remove,
        Null,
        Boolean,
        Integer,
        Double,
        Decimal,
        String,
        RawJson,
        Document,
        Object,
    }

    internal sealed class Operation
    {
        public byte[] Name = [];
        public OperationKind Kind;
        public long Integer;
        public double Double;
        public decimal Decimal;
        public byte[]? Bytes;
        public BlittablePatch? Nested;
    }

    private readonly List<Operation> _operations = new();
    private readonly List<Operation> _spare = new();

    internal int Count => _operations.Count;

    internal Operation this[int index] => _operations[index];

    public bool IsEmpty => _operations.Count == 0;

    public BlittablePatch Set(string name, string? value)
    {
        if (value is null)
        {
            return SetNull(name);
        }

        var op = Add(name, OperationKind.String);
        op.Bytes = Encoding.UTF8.GetBytes(value);
        return this;
    }

    public BlittablePatch Set(string name, long value)
    {
        Add(name, OperationKind.Integer).Integer = value;
        return this;
    }

    public BlittablePatch Set(string name, double value)
    {
        if (!double.IsFinite(value))
        {
            throw new ArgumentOutOfRangeException(nameof(value), value, "JSON has no representation for NaN or infinities.");
        }

        Add(name, OperationKind.Double).Double = value;
        return this;
    }

    public BlittablePatch Set(string name, decimal value)
    {
        Add(name, OperationKind.Decimal).Decimal = value;
        return this;
    }

    public BlittablePatch Set(string name, bool value)
    {
        Add(name, OperationKind.Boolean).Integer = value ? 1 : 0;
        return this;
    }

    public BlittablePatch SetNull(string name)
    {
        Add(name, OperationKind.Null);
        return this;
    }

    /// <summary>Sets a property to any JSON value given as UTF-8 text (validated when the patch is applied).</summary>
    public BlittablePatch SetRawJson(string name, ReadOnlySpan<byte> utf8Json)
    {
        Add(name, OperationKind.RawJson).Bytes = utf8Json.ToArray();
        return this;
    }

    /// <summary>Sets a property to the root object of another blittable document.</summary>
    public BlittablePatch SetDocument(string name, ReadOnlySpan<byte> blittable)
    {
        BlittableReader.Open(blittable);
        Add(name, OperationKind.Document).Bytes = blittable.ToArray();
        return this;
    }

    public BlittablePatch Remove(string name)
    {
        Add(name, OperationKind.Remove);
        return this;
    }

    /// <summary>The patch for a nested object (created in the document if absent, replacing a non-object value).</summary>
    public BlittablePatch Object(string name)
    {
        var existing = FindOperation(Encoding.UTF8.GetBytes(name));
        if (existing is { Kind: OperationKind.Object, Nested: not null })
        {
            return existing.Nested;
        }

        var op = Add(name, OperationKind.Object);
        op.Nested ??= new BlittablePatch();
        op.Nested.Clear();
        return op.Nested;
    }

    public void Clear()
    {
        _spare.AddRange(_operations);
        _operations.Clear();
    }

    internal Operation? Find(ReadOnlySpan<byte> name)
    {
        foreach (var op in _operations)
        {
            if (name.SequenceEqual(op.Name))
            {
                return op;
            }
        }

        return null;
    }

    private Operation? FindOperation(byte[] name) => Find(name);

    private Operation Add(string name, OperationKind kind)
    {
        ArgumentNullException.ThrowIfNull(name);
        var utf8 = Encoding.UTF8.GetBytes(name);
        var op = FindOperation(utf8);
        if (op is null)
        {
            if (_spare.Count > 0)
            {
                op = _spare[^1];
                _spare.RemoveAt(_spare.Count - 1);
            }
            else
            {
                op = new Operation();
            }

            op.Name = utf8;
            _operations.Add(op);
        }

        op.Kind = kind;
        op.Bytes = null;
        if (kind != OperationKind.Object)
        {
            op.Nested?.Clear();
        }

        return op;
    }
}
