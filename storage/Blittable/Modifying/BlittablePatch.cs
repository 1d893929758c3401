using System.Text;

namespace Jackdaw.Storage.Blittable;

/// <summary>
/// Changes to apply to a document with <see cref="JsonOperationContext.Modify"/>: set, remove, or
/// descend into a nested object (created if absent). Setting an existing property keeps its
/// position; new properties are appended. The last change to a name wins. Reusable after
/// <see cref="Clear"/>: operations and their buffers are recycled, so a patch built the same way for
/// every request (metadata stamping) allocates nothing after warm-up.
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
        public byte[] Name = new byte[16];
        public int NameLength;
        public OperationKind Kind;
        public long Integer;
        public double Double;
        public decimal Decimal;
        public byte[] Bytes = [];
        public int BytesLength;
        public BlittablePatch? Nested;

        public ReadOnlySpan<byte> NameSpan => Name.AsSpan(0, NameLength);

        public ReadOnlySpan<byte> Value => Bytes.AsSpan(0, BytesLength);

        public void SetBytes(ReadOnlySpan<byte> value)
        {
            if (Bytes.Length < value.Length)
            {
                Bytes = new byte[Math.Max(value.Length, 32)];
            }

            value.CopyTo(Bytes);
            BytesLength = value.Length;
        }

        public void SetString(string value)
        {
            var max = Encoding.UTF8.GetMaxByteCount(value.Length);
            if (Bytes.Length < max)
            {
                Bytes = new byte[Math.Max(max, 32)];
            }

            BytesLength = Encoding.UTF8.GetBytes(value, Bytes);
        }
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

        Add(name, OperationKind.String).SetString(value);
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

    /// <summary>Sets a string given as UTF-8 (for callers that already hold bytes: ids, change vectors).</summary>
    public BlittablePatch SetUtf8(string name, ReadOnlySpan<byte> utf8Value)
    {
        if (!System.Text.Unicode.Utf8.IsValid(utf8Value))
        {
            throw new ArgumentException("The value is not valid UTF-8.", nameof(utf8Value));
        }

        Add(name, OperationKind.String).SetBytes(utf8Value);
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
        Add(name, OperationKind.RawJson).SetBytes(utf8Json);
        return this;
    }

    /// <summary>
    /// Sets a property to the root object of another blittable document. Only its header is checked
    /// here; the rest is read when the patch is applied, and a corrupt document fails that Modify
    /// with a <see cref="BlittableFormatException"/>.
    /// </summary>
    public BlittablePatch SetDocument(string name, ReadOnlySpan<byte> blittable)
    {
        BlittableReader.Open(blittable);
        Add(name, OperationKind.Document).SetBytes(blittable);
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
        var existing = FindByName(name, _operations, out _);
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
            if (name.SequenceEqual(op.NameSpan))
            {
                return op;
            }
        }

        return null;
    }

    private static Operation? FindByName(string name, List<Operation> operations, out int index)
    {
        Span<byte> utf8 = stackalloc byte[256];
        if (Encoding.UTF8.GetMaxByteCount(name.Length) > utf8.Length)
        {
            utf8 = new byte[Encoding.UTF8.GetMaxByteCount(name.Length)];
        }

        var length = Encoding.UTF8.GetBytes(name, utf8);
        for (var i = 0; i < operations.Count; i++)
        {
            if (operations[i].NameSpan.SequenceEqual(utf8.Slice(0, length)))
            {
                index = i;
                return operations[i];
            }
        }

        index = -1;
        return null;
    }

    private Operation Add(string name, OperationKind kind)
    {
        ArgumentNullException.ThrowIfNull(name);
        var op = FindByName(name, _operations, out _);
        if (op is null)
        {
            // Prefer a recycled operation that had the same name (no re-encoding), then any.
            op = FindByName(name, _spare, out var spareIndex);
            if (op is not null)
            {
                _spare.RemoveAt(spareIndex);
            }
            else if (_spare.Count > 0)
            {
                op = _spare[^1];
                _spare.RemoveAt(_spare.Count - 1);
                SetName(op, name);
            }
            else
            {
                op = new Operation();
                SetName(op, name);
            }

            _operations.Add(op);
        }

        op.Kind = kind;
        op.BytesLength = 0;
        if (kind != OperationKind.Object)
        {
            op.Nested?.Clear();
        }

        return op;
    }

    private static void SetName(Operation op, string name)
    {
        var max = Encoding.UTF8.GetMaxByteCount(name.Length);
        if (op.Name.Length < max)
        {
            op.Name = new byte[max];
        }

        op.NameLength = Encoding.UTF8.GetBytes(name, op.Name);
    }
}
