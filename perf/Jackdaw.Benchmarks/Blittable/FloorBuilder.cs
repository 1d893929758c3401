using System.Runtime.CompilerServices;
using System.Text.Json;

namespace Jackdaw.Benchmarks.Blittable;

// Not a product: the yardstick of BlittableParseBenchmarks.FloorBuilderParse and of
// tools/blittable-parse-floor.cs. Everything a real builder needs beyond this (sorted tables, UTF-8
// and duplicate checks, escape positions, a names area, variable-width rows) is left out on purpose.
/// <summary>The least per-token work of a builder that writes a self-contained binary document.</summary>
public sealed class FloorBuilder
{
    private static readonly JsonReaderOptions Options = new() { MaxDepth = 264 };
    private readonly byte[] _output = new byte[1 << 20];
    private readonly int[] _entryName = new int[4096];
    private readonly int[] _entryPosition = new int[4096];
    private readonly byte[] _entryType = new byte[4096];
    private readonly int[] _frames = new int[600];
    private readonly byte[][] _names = new byte[512][];
    private readonly int[] _successor = Enumerable.Repeat(-1, 513).ToArray();
    private int _entryCount;
    private int _nameCount;
    private int _previousName;
    private int _currentName;

    public int Build(ReadOnlySpan<byte> json)
    {
        var reader = new Utf8JsonReader(json, isFinalBlock: true, new JsonReaderState(Options));
        var output = _output;
        var position = 0;
        var depth = 0;
        _entryCount = 0;
        _previousName = -1;
        while (reader.Read())
        {
            switch (reader.TokenType)
            {
                case JsonTokenType.PropertyName:
                    _currentName = Name(reader.ValueSpan);
                    break;
                case JsonTokenType.String:
                {
                    int length;
                    if (reader.ValueIsEscaped)
                    {
                        length = reader.CopyString(output.AsSpan(position + 2));
                    }
                    else
                    {
                        var value = reader.ValueSpan;
                        value.CopyTo(output.AsSpan(position + 2));
                        length = value.Length;
                    }

                    Unsafe.WriteUnaligned(ref output[position], (ushort)length);
                    Add(position, 5);
                    position += length + 2;
                    break;
                }

                case JsonTokenType.Number:
                {
                    var value = reader.ValueSpan;
                    value.CopyTo(output.AsSpan(position + 1));
                    output[position] = (byte)value.Length;
                    Add(position, 4);
                    position += value.Length + 1;
                    break;
                }

                case JsonTokenType.True:
                    Add(-1, 1);
                    break;
                case JsonTokenType.False:
                    Add(-1, 2);
                    break;
                case JsonTokenType.Null:
                    Add(-1, 3);
                    break;
                case JsonTokenType.StartObject or JsonTokenType.StartArray:
                    _frames[depth++] = _entryCount;
                    _frames[depth++] = _currentName;
                    break;
                default:
                {
                    // EndObject or EndArray: one row per entry, then the container is an entry of its parent.
                    _currentName = _frames[--depth];
                    var start = _frames[--depth];
                    var table = position;
                    for (var i = start; i < _entryCount; i++)
                    {
                        var back = _entryPosition[i] < 0 ? 0 : table - _entryPosition[i];
                        Unsafe.WriteUnaligned(ref output[position], (uint)(_entryName[i] | (back << 8) | (_entryType[i] << 24)));
                        position += 4;
                    }

                    _entryCount = start;
                    Add(table, 6);
                    break;
                }
            }
        }

        return position;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Add(int position, byte type)
    {
        var entry = _entryCount++;
        _entryName[entry] = _currentName;
        _entryPosition[entry] = position;
        _entryType[entry] = type;
    }

    private int Name(ReadOnlySpan<byte> name)
    {
        var guess = _successor[_previousName + 1];
        if (guess < 0 || !name.SequenceEqual(_names[guess]))
        {
            guess = 0;
            while (guess < _nameCount && !name.SequenceEqual(_names[guess]))
            {
                guess++;
            }

            if (guess == _nameCount)
            {
                _nameCount++;
                _names[guess] = name.ToArray();
            }

            _successor[_previousName + 1] = guess;
        }

        _previousName = guess;
        return guess;
    }
}
