using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics;
using System.Text.Unicode;

namespace Jackdaw.Storage.Blittable;

/// <summary>
/// Writes a blittable document in one pass. Values go straight into the context's pooled buffer;
/// each object or array keeps its entries on a shared stack until it ends, when its table is
/// written after its values. Obtained from <see cref="JsonOperationContext"/>; reused.
/// </summary>
public sealed partial class BlittableBuilder
{
    private struct Frame
    {
        public bool IsObject;
        public int EntryStart;
        public int NameIndex;        // the name keying this container in its parent object (-1 if none)
        public int NameOffset;
        public long NameInputPosition;
    }

    private struct Entry
    {
        public int NameIndex;        // name id in _names (objects only)
        public int NameOffset;       // of the name in this document's names area
        public int ValuePosition;    // relative to the document start; -1 for values without bytes
        public BlittableType Type;
        public long InputPosition;   // of the property name, for duplicate errors
    }

    private readonly JsonOperationContext _context;
    private readonly NameTable _names = new();
    private readonly ShapeCache _shapes = new();
    private int[] _ids = new int[64];
    private int _documentStamp;
    // [2 * (previous name id + 1)] -> the name id that followed it last time, and at + 1 the one
    // before that (one name often has two successors: Name in a company and in its contacts).
    private int[] _successors = CreateSuccessors(InitialSuccessors);
    private byte[] _buffer = [];
    private int _start;
    private int _pos;            // absolute index in _buffer
    private BlittableMode _mode;
    private Frame[] _frames = new Frame[16];
    private int _depth;
    // Working arrays rented from the shared pool (see WorkingArray): they grow with the largest
    // document of a request and are trimmed back to these lengths at its end.
    private const int InitialEntries = 64;
    private const int InitialOrder = 64;
    private const int InitialEscapes = 16;
    private const int InitialScratch = 256;
    private const int InitialNameBuffer = 1024;
    private const int InitialEncodedName = 64;
    private const int InitialSuccessors = 512;
    private Entry[] _entries = WorkingArray.Rent<Entry>(InitialEntries);
    private int _entryCount;
    private int[] _order = WorkingArray.Rent<int>(InitialOrder);
    private int[] _escapes = WorkingArray.Rent<int>(InitialEscapes);
    private int _escapeCount;
    private byte[] _scratch = WorkingArray.Rent<byte>(InitialScratch);
    private byte[] _nameBuffer = WorkingArray.Rent<byte>(InitialNameBuffer);  // the names area, appended to the document at the end
    private byte[] _encodedName = WorkingArray.Rent<byte>(InitialEncodedName);
    private int _namePos;
    private bool _namesAsBefore;   // every name so far sits where the previous document put it (see WriteName)
    private int _previousName = -1;   // name id of the last entry in the current object (or of the object itself)
    private int _rootOffset;
    private BlittableType _lastCompressedType;  // set by TryWriteCompressed for its caller
    private bool _active;
    private bool _rootDone;

    internal BlittableBuilder(JsonOperationContext context)
    {
        _context = context;
    }

    internal BlittableMode Mode => _mode;

    internal bool RootDone => _rootDone;

    internal int Depth => _depth;

    internal void Start(BlittableMode mode)
    {
        if (_active)
        {
            Abandon();
        }

        _mode = mode;
        _buffer = _context.BeginDocument(out _start);
        _pos = _start + BlittableHeader.Size;
        _depth = 0;
        _entryCount = 0;
        _previousName = -1;
        _rootOffset = 0;
        _rootDone = false;
        _active = true;
        if (_names.IsOverfull || _documentStamp == int.MaxValue)
        {
            _names.Clear();
            _successors.AsSpan().Fill(-1);
            _documentStamp = 0;
        }

        _documentStamp++;
        _namePos = 0;
        _namesAsBefore = true;
        ResetReaderState();
    }

    /// <summary>Drops a document in progress (its bytes are simply not committed).</summary>
    internal void Abandon()
    {
        _active = false;
        _buffer = [];
    }

    private static int[] CreateSuccessors(int size)
    {
        var successors = new int[size];
        successors.AsSpan().Fill(-1);
        return successors;
    }

    /// <summary>
    /// End of a request (no document in progress): working arrays a large document grew past
    /// <see cref="WorkingArray.KeepBytes"/> go back to the pool, and a name table grown huge starts
    /// over; what small documents use stays, so they build without allocating.
    /// </summary>
    internal void TrimAfterRequest()
    {
        WorkingArray.Trim(ref _entries, InitialEntries);
        WorkingArray.Trim(ref _order, InitialOrder);
        WorkingArray.Trim(ref _escapes, InitialEscapes);
        WorkingArray.Trim(ref _scratch, InitialScratch);
        WorkingArray.Trim(ref _encodedName, InitialEncodedName);
        if (WorkingArray.Trim(ref _nameBuffer, InitialNameBuffer) && _documentStamp < int.MaxValue)
        {
            // The previous document's names area is gone with its buffer: no name may count as
            // written where that document put it (WriteName), so skip one stamp. At int.MaxValue
            // the next Start clears the table anyway.
            _documentStamp++;
        }

        if (_names.TrimIfLarge())
        {
            _successors = CreateSuccessors(InitialSuccessors);
            _documentStamp = 0;
        }
    }

    /// <summary>The context is disposed: every rented working array goes back to the pool.</summary>
    internal void Release()
    {
        WorkingArray.Release(ref _entries);
        WorkingArray.Release(ref _order);
        WorkingArray.Release(ref _escapes);
        WorkingArray.Release(ref _scratch);
        WorkingArray.Release(ref _nameBuffer);
        WorkingArray.Release(ref _encodedName);
    }

    /// <summary>Property names the builder knows from earlier documents (diagnostics and tests).</summary>
    internal int LearnedNames => _names.Count;

    /// <summary>Bytes held by the working arrays and the name table (diagnostics and tests).</summary>
    internal long RetainedBytes =>
        WorkingArray.SizeOf(_entries) + WorkingArray.SizeOf(_order) + WorkingArray.SizeOf(_escapes)
        + WorkingArray.SizeOf(_scratch) + WorkingArray.SizeOf(_nameBuffer) + WorkingArray.SizeOf(_encodedName)
        + WorkingArray.SizeOf(_frames) + WorkingArray.SizeOf(_ids) + WorkingArray.SizeOf(_successors)
        + _names.RetainedBytes;

    internal BlittableDocument CompleteBuilt()
    {
        if (!_rootDone)
        {
            ThrowParse(BlittableParseError.Truncated, 0, "The document ended before its root object was closed.");
        }

        Ensure(_namePos);
        var namesOffset = Relative;
        _nameBuffer.AsSpan(0, _namePos).CopyTo(_buffer.AsSpan(_pos));
        _pos += _namePos;
        var length = _pos - _start;
        var flags = _mode == BlittableMode.Disk ? BlittableHeader.DiskModeFlag : (byte)0;
        BlittableHeader.Write(_buffer.AsSpan(_start), flags, length, _rootOffset, namesOffset);
        var document = new BlittableDocument(_buffer, _start, length);
        _context.EndDocument(_buffer, _start, length);
        _active = false;
        _buffer = [];
        return document;
    }

    private Span<byte> Document => _buffer.AsSpan(_start, _pos - _start);

    private int Relative => _pos - _start;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Ensure(int bytes)
    {
        if (_buffer.Length - _pos < bytes)
        {
            Grow(bytes);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void Grow(int bytes)
    {
        if (!_active)
        {
            throw new InvalidOperationException("The builder is not building a document: start one with JsonOperationContext.StartParse.");
        }

        var length = _pos - _start;
        var required = (long)length + bytes;
        if (required > Array.MaxLength)
        {
            ThrowParse(BlittableParseError.TooLarge, 0, "The document would exceed the largest array .NET can allocate.");
        }

        _buffer = _context.GrowDocument(_buffer, _start, length, (int)required);
        _start = 0;
        _pos = length;
    }

    // ---- token API (used by the JSON parser and by Modify) ----

    internal void BeginObject(long inputPosition)
    {
        PushFrame(isObject: true, inputPosition);
    }

    internal void BeginArray(long inputPosition)
    {
        PushFrame(isObject: false, inputPosition);
    }

    private void PushFrame(bool isObject, long inputPosition)
    {
        if (_depth >= BlittableFormat.MaxDepth)
        {
            ThrowParse(BlittableParseError.TooDeep, inputPosition, "Nesting is limited to 256 levels.");
        }

        if (_depth == _frames.Length)
        {
            Array.Resize(ref _frames, _frames.Length * 2);
        }

        // The name keying this container (in an object) sits in the next entry slot, which the
        // container's own entries are about to reuse: keep it in the frame until CloseContainer.
        var nameIndex = -1;
        var nameOffset = 0;
        long nameInput = 0;
        if (_depth > 0 && _frames[_depth - 1].IsObject)
        {
            ref var slot = ref _entries[_entryCount];
            nameIndex = slot.NameIndex;
            nameOffset = slot.NameOffset;
            nameInput = slot.InputPosition;
        }

        ref var frame = ref _frames[_depth++];
        frame.IsObject = isObject;
        frame.EntryStart = _entryCount;
        frame.NameIndex = nameIndex;
        frame.NameOffset = nameOffset;
        frame.NameInputPosition = nameInput;
        _previousName = nameIndex;
    }

    /// <summary>Registers the next property name (UTF-8, unescaped; <paramref name="mayNeedEscapes"/> if it came escaped).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void PropertyName(ReadOnlySpan<byte> name, bool mayNeedEscapes, long inputPosition, bool validateUtf8 = false)
    {
        // Documents of a collection repeat their shape: the name that followed the previous one
        // last time is tried first, before hashing.
        var found = GuessName();
        if (found < 0 || !_names.Matches(found, name))
        {
            found = AlternateName();
            if (found < 0 || !_names.Matches(found, name))
            {
                found = FindName(name, mayNeedEscapes, inputPosition, validateUtf8);
            }

            RememberName(found);
        }

        UseName(found, inputPosition);
    }

    /// <summary>The id of the name that followed the previous one last time, or -1.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private int GuessName()
    {
        var slot = 2 * (_previousName + 1);
        var successors = _successors;
        return (uint)slot < (uint)successors.Length ? successors[slot] : -1;
    }

    /// <summary>The id of the name that followed the previous one the time before, or -1.</summary>
    private int AlternateName()
    {
        var slot = 2 * (_previousName + 1);
        var successors = _successors;
        return (uint)slot < (uint)successors.Length ? successors[slot + 1] : -1;
    }

    /// <summary>After a wrong guess: <paramref name="found"/> becomes the guess, the old guess the alternate.</summary>
    private void RememberName(int found)
    {
        var slot = 2 * (_previousName + 1);
        var successors = _successors;
        if ((uint)slot < (uint)successors.Length)
        {
            successors[slot + 1] = successors[slot];
            successors[slot] = found;
        }
    }

    /// <summary>Makes the name with id <paramref name="found"/> the name of the next entry.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void UseName(int found, long inputPosition)
    {
        ref var known = ref _names[found];
        if (known.DocumentStamp != _documentStamp)
        {
            WriteName(found);
        }

        // The name goes straight into the entry its value will complete (see AddEntry).
        if (_entryCount == _entries.Length)
        {
            WorkingArray.Grow(ref _entries, _entryCount + 1, keepContent: true);
        }

        ref var entry = ref _entries[_entryCount];
        entry.NameIndex = found;
        entry.NameOffset = known.DocumentOffset;
        entry.InputPosition = inputPosition;
    }

    private int FindName(ReadOnlySpan<byte> name, bool mayNeedEscapes, long inputPosition, bool validateUtf8)
    {
        var hash = NameTable.HashOf(name);
        var found = _names.Find(name, hash);
        if (found < 0)
        {
            found = AddName(name, mayNeedEscapes, hash, ~found, inputPosition, validateUtf8);
            if (_successors.Length <= 2 * (_names.Count + 1))
            {
                var grown = new int[Math.Max(_successors.Length * 2, 2 * (_names.Count + 1))];
                grown.AsSpan().Fill(-1);
                _successors.CopyTo(grown, 0);
                _successors = grown;
            }
        }

        return found;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private int AddName(ReadOnlySpan<byte> name, bool mayNeedEscapes, uint hash, int slot, long inputPosition, bool validateUtf8)
    {
        if (validateUtf8 && !System.Text.Unicode.Utf8.IsValid(name))
        {
            ThrowParse(BlittableParseError.InvalidUtf8, inputPosition, "A property name is not valid UTF-8");
        }

        // Encode once (length header, bytes, escape list); each document then copies these bytes.
        FindEscapes(name, mayNeedEscapes);
        var size = 5 + name.Length + 5 + (_escapeCount * 5);
        if (_encodedName.Length < size)
        {
            WorkingArray.Grow(ref _encodedName, size, keepContent: false);
        }

        var dataOffset = BlittableFormat.WriteVarInt(_encodedName, 0, StringHeader(name.Length));
        name.CopyTo(_encodedName.AsSpan(dataOffset));
        var end = WriteEscapeList(_encodedName, dataOffset + name.Length);
        return _names.Add(slot, _encodedName.AsSpan(0, end), dataOffset, name.Length, hash);
    }

    /// <summary>Writes a name to this document's names area the first time the document uses it.</summary>
    private void WriteName(int id)
    {
        ref var entry = ref _names[id];
        if (_namesAsBefore && entry.DocumentOffset == _namePos && entry.DocumentStamp == _documentStamp - 1 && entry.DocumentStamp != 0)
        {
            // Documents of one shape use their names in the same order. While this one has used
            // them exactly as the previous one did, _nameBuffer still holds the previous names area
            // unchanged from here on, and this name at this very offset: no copy.
            entry.DocumentStamp = _documentStamp;
            _namePos += entry.EncodedLength;
            return;
        }

        _namesAsBefore = false;
        var encoded = _names.EncodedOf(entry);
        var needed = (long)_namePos + encoded.Length;
        if (needed > _nameBuffer.Length)
        {
            if (needed > Array.MaxLength / 2)
            {
                ThrowParse(BlittableParseError.TooLarge, 0, "The property names of one document exceed 1 GiB.");
            }

            // The whole buffer: past _namePos it may hold the previous document's names area,
            // which the test above relies on.
            WorkingArray.Grow(ref _nameBuffer, needed, keepContent: true);
        }

        entry.DocumentOffset = _namePos;
        entry.DocumentStamp = _documentStamp;
        BlittableFormat.SmallCopy(encoded, _nameBuffer.AsSpan(_namePos));
        _namePos += encoded.Length;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void AddEntry(BlittableType type, int valuePosition)
    {
        if (_entryCount == _entries.Length)
        {
            WorkingArray.Grow(ref _entries, _entryCount + 1, keepContent: true);
        }

        // In an object, PropertyName has filled in the name fields of this entry; in an array they
        // hold whatever was there before and are never read.
        ref var entry = ref _entries[_entryCount++];
        entry.ValuePosition = valuePosition;
        entry.Type = type;
        _previousName = entry.NameIndex;
    }

    internal void WriteNull() => AddEntry(BlittableType.Null, -1);

    internal void WriteBoolean(bool value) => AddEntry(value ? BlittableType.True : BlittableType.False, -1);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void WriteInteger(long value)
    {
        Ensure(10);
        var position = Relative;
        _pos = BlittableFormat.WriteVarInt64(_buffer, _pos, BlittableFormat.ZigZag(value));
        AddEntry(BlittableType.Integer, position);
    }

    /// <summary>Writes a non-integer number as its text (validated first in Disk mode by the caller).</summary>
    internal void WriteNumberText(ReadOnlySpan<byte> text)
    {
        Ensure(5 + text.Length);
        var position = Relative;
        _pos = BlittableFormat.WriteVarInt(_buffer, _pos, (uint)text.Length);
        text.CopyTo(_buffer.AsSpan(_pos));
        _pos += text.Length;
        AddEntry(BlittableType.Double, position);
    }

    /// <summary>Writes a string value (UTF-8, unescaped).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal void WriteString(ReadOnlySpan<byte> value, bool mayNeedEscapes)
    {
        // Fast path: a short string with nothing to escape, in Memory mode: one header byte and a copy.
        var buffer = _buffer;
        var pos = _pos;
        if (!mayNeedEscapes && _mode == BlittableMode.Memory && value.Length < 64 && buffer.Length - pos > 64)
        {
            buffer[pos] = (byte)(value.Length << 1);
            BlittableFormat.SmallCopy(value, new Span<byte>(buffer, pos + 1, value.Length));
            _pos = pos + 1 + value.Length;
            AddEntry(BlittableType.String, pos - _start);
            return;
        }

        WriteStringSlow(value, mayNeedEscapes);
    }

    /// <summary>
    /// Writes a string value read from JSON input (UTF-8, unescaped), checking that it is valid UTF-8;
    /// false, with nothing written, when it is not.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool TryWriteInputString(ReadOnlySpan<byte> value, bool mayNeedEscapes)
    {
        // Fast path as in WriteString; the copy tells ASCII apart on the way, so only strings with
        // bytes >= 0x80 pay for a UTF-8 check (rejected ones are overwritten by what follows).
        var buffer = _buffer;
        var pos = _pos;
        if (!mayNeedEscapes && _mode == BlittableMode.Memory && value.Length < 64 && buffer.Length - pos > 64)
        {
            if (!AsciiCopy.TryCopy(value, new Span<byte>(buffer, pos + 1, value.Length)) && !Utf8.IsValid(value))
            {
                return false;
            }

            buffer[pos] = (byte)(value.Length << 1);
            _pos = pos + 1 + value.Length;
            AddEntry(BlittableType.String, pos - _start);
            return true;
        }

        if (!_inputValidated && !Utf8.IsValid(value))
        {
            return false;
        }

        WriteStringSlow(value, mayNeedEscapes);
        return true;
    }

    /// <summary>Longest name or string handled with one 32-byte move (see TryWriteShortString).</summary>
    private const int ShortChunk = 32;

    /// <summary>
    /// Writes a short unescaped string value (under 64 bytes) read from JSON input in Memory mode,
    /// given as the input bytes that start with it (32, or 64 when it is longer than 32): one or two
    /// 32-byte moves (what follows the string lands in free buffer space and is overwritten next)
    /// and a masked ASCII test. False, with nothing written, when the caller must take the general path.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool TryWriteShortString(ReadOnlySpan<byte> chunk, int length)
    {
        var buffer = _buffer;
        var pos = _pos;
        if (_mode != BlittableMode.Memory || buffer.Length - pos <= 64)
        {
            return false;
        }

        var bytes = Vector256.Create(chunk);
        bytes.CopyTo(buffer.AsSpan(pos + 1, ShortChunk));
        ulong highBits = bytes.ExtractMostSignificantBits();
        if (length > ShortChunk)
        {
            var upper = Vector256.Create(chunk.Slice(ShortChunk, ShortChunk));
            upper.CopyTo(buffer.AsSpan(pos + 1 + ShortChunk, ShortChunk));
            highBits |= (ulong)upper.ExtractMostSignificantBits() << ShortChunk;
        }

        var nonAscii = highBits & ((1UL << length) - 1);
        if (nonAscii != 0 && !Utf8.IsValid(chunk.Slice(0, length)))
        {
            return false;
        }

        buffer[pos] = (byte)(length << 1);
        _pos = pos + 1 + length;
        AddEntry(BlittableType.String, pos - _start);
        return true;
    }

    private void WriteStringSlow(ReadOnlySpan<byte> value, bool mayNeedEscapes)
    {
        FindEscapes(value, mayNeedEscapes);
        var position = Relative;
        if (_mode == BlittableMode.Disk && value.Length >= StringCompression.MinLength && TryWriteCompressed(value))
        {
            AddEntry(_lastCompressedType, position);
            return;
        }

        Ensure(5 + value.Length + 5 + (_escapeCount * 5));
        _pos = BlittableFormat.WriteVarInt(_buffer, _pos, StringHeader(value.Length));
        value.CopyTo(_buffer.AsSpan(_pos));
        _pos = WriteEscapeList(_buffer, _pos + value.Length);
        AddEntry(BlittableType.String, position);
    }

    private bool TryWriteCompressed(ReadOnlySpan<byte> value)
    {
        // Worst case we write the raw form; compressed output must be strictly smaller than that.
        Ensure(10 + value.Length + 5 + (_escapeCount * 5));
        var headerRoom = 10;
        var destination = _buffer.AsSpan(_pos + headerRoom, value.Length);
        var type = StringCompression.TryCompress(value, destination, out var written);
        if (type == BlittableType.String)
        {
            return false;
        }

        // compressed length + decoded length + bytes must beat length + bytes.
        var rawSize = VarIntSize(StringHeader(value.Length)) + value.Length;
        var compressedSize = VarIntSize(StringHeader(written)) + (type == BlittableType.StringLz4 ? VarIntSize((uint)value.Length) : 0) + written;
        if (compressedSize >= rawSize)
        {
            return false;
        }

        var headerPos = BlittableFormat.WriteVarInt(_buffer, _pos, StringHeader(written));
        if (type == BlittableType.StringLz4)
        {
            headerPos = BlittableFormat.WriteVarInt(_buffer, headerPos, (uint)value.Length);
        }

        _buffer.AsSpan(_pos + headerRoom, written).CopyTo(_buffer.AsSpan(headerPos));
        _pos = WriteEscapeList(_buffer, headerPos + written);
        _lastCompressedType = type;
        return true;
    }

    internal static int VarIntSize(uint value) => value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x200000 ? 3 : value < 0x10000000 ? 4 : 5;

    /// <summary>Copies an already encoded string (compressed or not) from another document.</summary>
    internal void WriteEncodedString(BlittableType type, ReadOnlySpan<byte> encoded)
    {
        Ensure(encoded.Length);
        var position = Relative;
        encoded.CopyTo(_buffer.AsSpan(_pos));
        _pos += encoded.Length;
        AddEntry(type, position);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void FindEscapes(ReadOnlySpan<byte> value, bool mayNeedEscapes)
    {
        _escapeCount = 0;
        if (mayNeedEscapes)
        {
            FindEscapesSlow(value);
        }
    }

    /// <summary>
    /// Records the positions of bytes to escape and checks UTF-8 (an ASCII test first: the common case,
    /// and cheaper than the full check). With UTF-8 checked here, the escape search needs only the
    /// ASCII set of bytes to escape, not one that also holds every byte from 0x80.
    /// </summary>
    private bool FindEscapesCheckingUtf8(ReadOnlySpan<byte> value)
    {
        if (!System.Text.Ascii.IsValid(value) && !Utf8.IsValid(value))
        {
            return false;
        }

        _escapeCount = 0;
        FindEscapesSlow(value);
        return true;
    }

    private void FindEscapesSlow(ReadOnlySpan<byte> value)
    {
        var offset = 0;
        while (true)
        {
            var index = value.Slice(offset).IndexOfAny(NameTable.CharsToEscape);
            if (index < 0)
            {
                return;
            }

            if (_escapeCount == _escapes.Length)
            {
                WorkingArray.Grow(ref _escapes, _escapeCount + 1, keepContent: true);
            }

            _escapes[_escapeCount++] = offset + index;
            offset += index + 1;
        }
    }

    /// <summary>String length header: length shifted left, low bit set when an escape list follows.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private uint StringHeader(int length) => ((uint)length << 1) | (_escapeCount > 0 ? 1u : 0u);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private int WriteEscapeList(byte[] buffer, int pos)
    {
        if (_escapeCount == 0)
        {
            return pos;
        }

        return WriteEscapeListSlow(buffer, pos);
    }

    private int WriteEscapeListSlow(byte[] buffer, int pos)
    {
        pos = BlittableFormat.WriteVarInt(buffer, pos, (uint)_escapeCount);
        var previous = 0;
        for (var i = 0; i < _escapeCount; i++)
        {
            pos = BlittableFormat.WriteVarInt(buffer, pos, (uint)(_escapes[i] - previous));
            previous = _escapes[i];
        }

        return pos;
    }

    internal void EndObject()
    {
        ref var frame = ref _frames[--_depth];
        var start = frame.EntryStart;
        var count = _entryCount - start;
        var tablePosition = Relative;
        var nameIndex = frame.NameIndex;
        var nameOffset = frame.NameOffset;
        var nameInput = frame.NameInputPosition;
        var entries = _entries.AsSpan(start, count);

        // The widest offsets decide the entry widths. Values are appended in entry order, so the
        // first entry with bytes lies lowest; every name offset lies below the names area's end.
        var minValue = tablePosition;
        foreach (ref var entry in entries)
        {
            if (entry.ValuePosition >= 0)
            {
                minValue = entry.ValuePosition;
                break;
            }
        }

        var maxName = _namePos <= 0x100 ? 0 : MaxNameOffset(entries);
        var valueCode = BlittableFormat.WidthCodeFor((uint)(tablePosition - minValue));
        var nameCode = BlittableFormat.WidthCodeFor((uint)maxName);
        var orderCode = BlittableFormat.WidthCodeFor((uint)Math.Max(count - 1, 0));
        var valueWidth = 1 << valueCode;
        var nameWidth = 1 << nameCode;
        var orderWidth = 1 << orderCode;
        Ensure(6 + (count * (nameWidth + valueWidth + 1 + orderWidth)));
        var buffer = _buffer;
        var pos = _pos;
        buffer[pos++] = (byte)(BlittableFormat.ObjectTag | (orderCode << 4) | (nameCode << 2) | valueCode);
        pos = BlittableFormat.WriteVarInt(buffer, pos, (uint)count);
        var table = buffer.AsSpan(pos, count * (nameWidth + valueWidth + 1));

        // The same pass hashes the shape (the sequence of name ids) for the sorted-order cache.
        var shapeHash = (uint)count;
        if (nameWidth == 1 && valueWidth <= 2)
        {
            // The common case (names area under 256 bytes): each entry is one 4-byte store of
            // name, back distance (1 or 2 bytes) and type. With 1-byte distances the fourth byte
            // spills into the next entry or the first order byte, both written after it (Ensure
            // above reserved the order bytes, so the spill stays inside the reserved space).
            var rows = buffer.AsSpan(pos, table.Length + 1);
            var stride = 2 + valueWidth;
            var typeShift = 8 * (1 + valueWidth);
            var p = 0;
            foreach (ref var entry in entries)
            {
                shapeHash = (shapeHash ^ (uint)entry.NameIndex) * 0x9E3779B1u;
                var back = entry.ValuePosition < 0 ? 0u : (uint)(tablePosition - entry.ValuePosition);
                var row = (uint)(byte)entry.NameOffset | (back << 8) | ((uint)entry.Type << typeShift);
                System.Buffers.Binary.BinaryPrimitives.WriteUInt32LittleEndian(rows.Slice(p), row);
                p += stride;
            }
        }
        else
        {
            var p = pos;
            foreach (ref var entry in entries)
            {
                shapeHash = (shapeHash ^ (uint)entry.NameIndex) * 0x9E3779B1u;
                BlittableFormat.WriteWidth(buffer, p, nameWidth, entry.NameOffset);
                p += nameWidth;
                BlittableFormat.WriteWidth(buffer, p, valueWidth, entry.ValuePosition < 0 ? 0 : tablePosition - entry.ValuePosition);
                p += valueWidth;
                buffer[p++] = (byte)entry.Type;
            }
        }

        pos += table.Length;
        // A cached shape holds at most ShapeCache.MaxCount (<= 256) names, so its order fits the 1-byte width.
        ReadOnlySpan<int> order = default;
        if (!_shapes.TryGet(_names.Epoch, shapeHash, count, out var cachedIds, out var orderBytes) || !SameIds(entries, cachedIds))
        {
            orderBytes = default;
            order = SortByName(start, count);
            if (count <= ShapeCache.MaxCount)
            {
                if (_ids.Length < count)
                {
                    _ids = new int[Math.Max(count, _ids.Length * 2)];
                }

                var ids = _ids.AsSpan(0, count);
                for (var i = 0; i < ids.Length; i++)
                {
                    ids[i] = entries[i].NameIndex;
                }

                _shapes.Add(_names.Epoch, shapeHash, ids, order);
            }
        }

        if (orderWidth == 1 && orderBytes.Length == count)
        {
            orderBytes.CopyTo(buffer.AsSpan(pos, count));
            pos += count;
        }
        else if (orderWidth == 1)
        {
            var destination = buffer.AsSpan(pos, count);
            for (var i = 0; i < destination.Length; i++)
            {
                destination[i] = (byte)order[i];
            }

            pos += count;
        }
        else
        {
            for (var i = 0; i < count; i++)
            {
                BlittableFormat.WriteWidth(buffer, pos, orderWidth, order[i]);
                pos += orderWidth;
            }
        }

        _pos = pos;
        _entryCount = start;
        CloseContainer(BlittableType.Object, tablePosition, nameIndex, nameOffset, nameInput);
    }

    private static int MaxNameOffset(Span<Entry> entries)
    {
        var max = 0;
        foreach (ref var entry in entries)
        {
            max = Math.Max(max, entry.NameOffset);
        }

        return max;
    }

    private static bool SameIds(Span<Entry> entries, ReadOnlySpan<int> ids)
    {
        for (var i = 0; i < entries.Length; i++)
        {
            if (entries[i].NameIndex != ids[i])
            {
                return false;
            }
        }

        return true;
    }

    internal void EndArray()
    {
        ref var frame = ref _frames[--_depth];
        var start = frame.EntryStart;
        var count = _entryCount - start;
        var tablePosition = Relative;
        var nameIndex = frame.NameIndex;
        var nameOffset = frame.NameOffset;
        var nameInput = frame.NameInputPosition;
        var entries = _entries.AsSpan(start, count);

        // Values are appended in entry order: the first entry with bytes is the farthest back.
        var maxBack = 0;
        foreach (ref var entry in entries)
        {
            if (entry.ValuePosition >= 0)
            {
                maxBack = tablePosition - entry.ValuePosition;
                break;
            }
        }

        var widthCode = BlittableFormat.WidthCodeFor((uint)maxBack);
        var width = BlittableFormat.WidthOf(widthCode);
        Ensure(6 + (count * (width + 1)));
        var buffer = _buffer;
        var pos = _pos;
        buffer[pos++] = (byte)(BlittableFormat.ArrayTag | widthCode);
        pos = BlittableFormat.WriteVarInt(buffer, pos, (uint)count);
        var table = buffer.AsSpan(pos, count * (width + 1));
        if (width == 1)
        {
            // The common case (the array's values span under 256 bytes): no width switch per entry.
            var p = 0;
            foreach (ref var entry in entries)
            {
                table[p] = (byte)(entry.ValuePosition < 0 ? 0 : tablePosition - entry.ValuePosition);
                table[p + 1] = (byte)entry.Type;
                p += 2;
            }
        }
        else
        {
            var p = pos;
            foreach (ref var entry in entries)
            {
                BlittableFormat.WriteWidth(buffer, p, width, entry.ValuePosition < 0 ? 0 : tablePosition - entry.ValuePosition);
                p += width;
                buffer[p++] = (byte)entry.Type;
            }
        }

        pos += table.Length;

        _pos = pos;
        _entryCount = start;
        CloseContainer(BlittableType.Array, tablePosition, nameIndex, nameOffset, nameInput);
    }

    private void CloseContainer(BlittableType type, int tablePosition, int nameIndex, int nameOffset, long nameInput)
    {
        if (_depth == 0)
        {
            _rootOffset = tablePosition;
            _rootDone = true;
            return;
        }

        if (_entryCount == _entries.Length)
        {
            WorkingArray.Grow(ref _entries, _entryCount + 1, keepContent: true);
        }

        ref var entry = ref _entries[_entryCount];
        entry.NameIndex = nameIndex;
        entry.NameOffset = nameOffset;
        entry.InputPosition = nameInput;
        AddEntry(type, tablePosition);
    }

    /// <summary>Sorts the object's entries by name; throws on a duplicate name.</summary>
    private Span<int> SortByName(int start, int count)
    {
        if (_order.Length < count)
        {
            WorkingArray.Grow(ref _order, count, keepContent: false);
        }

        var order = _order.AsSpan(0, count);
        for (var i = 0; i < count; i++)
        {
            order[i] = i;
        }

        var comparer = new EntryComparer(_entries, start, _names, _names.Bytes, 0);
        if (count <= 24)
        {
            for (var i = 1; i < count; i++)
            {
                var item = order[i];
                var j = i - 1;
                while (j >= 0 && comparer.Compare(order[j], item) > 0)
                {
                    order[j + 1] = order[j];
                    j--;
                }

                order[j + 1] = item;
            }
        }
        else
        {
            order.Sort(comparer);
        }

        for (var i = 1; i < count; i++)
        {
            if (_entries[start + order[i]].NameIndex == _entries[start + order[i - 1]].NameIndex)
            {
                ThrowFirstDuplicate(start);
            }
        }

        return order;
    }

    /// <summary>
    /// Reports the earliest second occurrence of a name in the object: the first entry, in input
    /// order, whose name an earlier one has (the sorted order does not tell, as the sort is not
    /// stable). Cold path.
    /// </summary>
    [DoesNotReturn]
    private void ThrowFirstDuplicate(int start)
    {
        var seen = new HashSet<int>();
        var i = 0;
        while (seen.Add(_entries[start + i].NameIndex))
        {
            i++;
        }

        ThrowDuplicate(start + i);
    }

    [DoesNotReturn]
    private void ThrowDuplicate(int entryIndex)
    {
        ref var entry = ref _entries[entryIndex];
        ref var name = ref _names[entry.NameIndex];
        var text = System.Text.Encoding.UTF8.GetString(_names.BytesOf(name));
        ThrowParse(BlittableParseError.DuplicateProperty, entry.InputPosition, $"The property \"{text}\" appears twice in one object");
    }

    private readonly struct EntryComparer : IComparer<int>
    {
        private readonly Entry[] _entries;
        private readonly int _start;
        private readonly NameTable _names;
        private readonly byte[] _buffer;
        private readonly int _documentStart;

        public EntryComparer(Entry[] entries, int start, NameTable names, byte[] buffer, int documentStart)
        {
            _entries = entries;
            _start = start;
            _names = names;
            _buffer = buffer;
            _documentStart = documentStart;
        }

        public int Compare(int x, int y)
        {
            var a = _entries[_start + x].NameIndex;
            var b = _entries[_start + y].NameIndex;
            if (a == b)
            {
                return 0;
            }

            ref var nameA = ref _names[a];
            ref var nameB = ref _names[b];
            if (nameA.SortKey != nameB.SortKey)
            {
                return nameA.SortKey < nameB.SortKey ? -1 : 1;
            }

            return _buffer.AsSpan(_documentStart + nameA.DataPosition, nameA.Length)
                .SequenceCompareTo(_buffer.AsSpan(_documentStart + nameB.DataPosition, nameB.Length));
        }
    }

    [DoesNotReturn]
    [MethodImpl(MethodImplOptions.NoInlining)]
    internal static void ThrowParse(BlittableParseError error, long position, string message) =>
        throw new BlittableParseException(error, position, message);
}
