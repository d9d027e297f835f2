/// The concrete bytes the C2SP specs give, copied from the spec texts (C2SP/C2SP at 5ba5ee8, 2026-07-22), and keys the
/// tests sign with.
enum SpecExamples {
    /// c2sp.org/signed-note "Verifier keys", "Example": the verifier key.
    static let fooVKey = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"
    /// The note that key verifies.
    static let fooNote =
        "This is an example message.\n\n"
        + "\u{2014} example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72I"
        + "neyaQM=\n"

    /// c2sp.org/signed-note, the opening example (its key is not given: parse only). Its text holds an empty line.
    static let quasimodoText =
        "Ognuno sta solo sul cuor della terra\ntrafitto da un raggio di sole:\n\ned \u{E8} subito sera.\n"
    static let quasimodoNote =
        quasimodoText + "\n"
        + "\u{2014} quasimodo.example/salvatore NnugSzTjtVAewIS+Z/iJhUPeFDkO/5QQ2i5ddnGITLlC+EhfLW9oJKONrMouFSQU0xMcXxj99"
        + "ihAQwaqP3ZekRwNtIc=\n"

    /// c2sp.org/tlog-checkpoint, the opening example (its key is not given: parse only).
    static let sofaText = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
    static let sofaSignatureLine =
        "\u{2014} example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo"
        + "+zyWE+xeMcTOAYQ8=\n"
    static let sofaNote = sofaText + "\n" + sofaSignatureLine

    /// c2sp.org/tlog-cosignature, the opening example: the same checkpoint with a witness's cosignature (type 0x04).
    static let cosignedSofaNote =
        sofaNote
        + "\u{2014} witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqh"
        + "f5nNo0xUe+mbIUBkBIfZ+qnA==\n"

    /// c2sp.org/tlog-proof, the opening example, up to its checkpoint's text; its signature lines are elided in the
    /// spec ("hI2DJw[...]1roloI="), so they are not base64.
    static let fancyProofHead =
        "c2sp.org/tlog-proof@v1\n"
        + "extra YWdlLXYxLjIuMS1kYXJ3aW4tYXJtNjQudGFyLmd6kYXJ3aW4tYXJ\n"
        + "index 73894\n"
        + "gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=\n"
        + "B95lDa8R83lS8n0eG+o0buTxRKQTYFi//1U8anccXmA=\n"
        + "EKNzoDWG8LGC0Yp9o+sv3qllpMP9uHQ9B20KNL+Q1zs=\n"
        + "RoopEkOdqkYqMB4MJXrbt/hMjOxsVn0IrWjpz1ZMMes=\n"
        + "AHCioX9nLjsrse6YhjRRmk1WUEirVOLLRoOQ6vfO5vk=\n"
        + "\n"
    static let fancyCheckpointText = "example.com/fancylog\n109482\nsFodV/vSp5O8n9a8QpW6PRY97tfOSW5bsc2Xl/EQi08=\n"
    static let fancyElidedSignatures =
        "\u{2014} example.com/fancylog hI2DJw[...]1roloI=\n"
        + "\u{2014} witness1.example mJirIklj[...]qY9v2B/5bg==\n"
        + "\u{2014} witness2.example TnKKVHLX[...]xwYwrSjgow==\n"
        + "\u{2014} witness3.example S4X82uH5[...]3oEcROGLFQ==\n"

    /// The bytes of a hex string (test data only: traps on bad hex).
    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.utf8)
        return stride(from: 0, to: digits.count, by: 2).map {
            UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
        }
    }
}
