// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title Tollbook's development stablecoin
/// @notice A USDC-shaped ERC-20 for the local chain only: six decimals, EIP-3009 transfers by
/// signed authorization, an EIP-712 domain readable through EIP-5267, and a mint that only the
/// deploying account (the development faucet) may call. It has no value and must never be
/// deployed anywhere real.
contract TestUSDC {
    string public constant name = "USD Coin (Tollbook test)";
    string public constant symbol = "USDC";
    /// @notice The EIP-712 domain version; "2" like Circle's FiatToken v2 line.
    string public constant version = "2";
    uint8 public constant decimals = 6;

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 public constant TRANSFER_WITH_AUTHORIZATION_TYPEHASH = keccak256(
        "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
    );
    bytes32 public constant RECEIVE_WITH_AUTHORIZATION_TYPEHASH = keccak256(
        "ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
    );
    bytes32 public constant CANCEL_AUTHORIZATION_TYPEHASH =
        keccak256("CancelAuthorization(address authorizer,bytes32 nonce)");

    /// @dev Half the order of secp256k1: a signature with a larger `s` has a twin with the same
    /// signer, so it is refused (EIP-2) and every authorization has exactly one valid encoding.
    uint256 private constant HALF_CURVE_ORDER =
        0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    address public immutable minter;

    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    mapping(address => mapping(bytes32 => bool)) private usedAuthorizations;

    /// @dev The separator is cached for the chain it was deployed on and recomputed after a fork
    /// changes the chain id, so a signature for one chain never works on another.
    uint256 private immutable deployedChainId;
    bytes32 private immutable deployedDomainSeparator;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);
    event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce);
    event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce);

    constructor(address minter_) {
        require(minter_ != address(0), "TestUSDC: minter is the zero address");
        minter = minter_;
        deployedChainId = block.chainid;
        deployedDomainSeparator = buildDomainSeparator();
    }

    // ---- ERC-20 ----

    function transfer(address to, uint256 value) external returns (bool) {
        move(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        require(spender != address(0), "TestUSDC: approve to the zero address");
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            require(allowed >= value, "TestUSDC: transfer amount exceeds allowance");
            allowance[from][msg.sender] = allowed - value;
        }
        move(from, to, value);
        return true;
    }

    /// @notice Creates tokens; only the deploying faucet account may call it.
    function mint(address to, uint256 value) external {
        require(msg.sender == minter, "TestUSDC: caller is not the minter");
        require(to != address(0), "TestUSDC: mint to the zero address");
        totalSupply += value;
        balanceOf[to] += value;
        emit Transfer(address(0), to, value);
    }

    // ---- EIP-712 / EIP-5267 ----

    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return block.chainid == deployedChainId ? deployedDomainSeparator : buildDomainSeparator();
    }

    /// @notice EIP-5267: the fields of the EIP-712 domain (name, version, chainId, verifyingContract).
    function eip712Domain()
        external
        view
        returns (
            bytes1 fields,
            string memory domainName,
            string memory domainVersion,
            uint256 chainId,
            address verifyingContract,
            bytes32 salt,
            uint256[] memory extensions
        )
    {
        return (hex"0f", name, version, block.chainid, address(this), bytes32(0), new uint256[](0));
    }

    // ---- EIP-3009 ----

    /// @notice Whether `authorizer` has used (or cancelled) the authorization `nonce`.
    function authorizationState(address authorizer, bytes32 nonce) external view returns (bool) {
        return usedAuthorizations[authorizer][nonce];
    }

    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        bytes32 structHash = keccak256(
            abi.encode(TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce)
        );
        spendAuthorization(from, nonce, validAfter, validBefore, structHash, v, r, s);
        move(from, to, value);
    }

    /// @notice The same transfer with the signature packed as 65 bytes (r, s, v).
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        (uint8 v, bytes32 r, bytes32 s) = splitSignature(signature);
        bytes32 structHash = keccak256(
            abi.encode(TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce)
        );
        spendAuthorization(from, nonce, validAfter, validBefore, structHash, v, r, s);
        move(from, to, value);
    }

    /// @notice Like transferWithAuthorization, but only the payee may submit it, so a third party
    /// watching the mempool cannot front-run a deposit made through another contract.
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        require(to == msg.sender, "TestUSDC: caller must be the payee");
        bytes32 structHash = keccak256(
            abi.encode(RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce)
        );
        spendAuthorization(from, nonce, validAfter, validBefore, structHash, v, r, s);
        move(from, to, value);
    }

    function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) external {
        require(!usedAuthorizations[authorizer][nonce], "TestUSDC: authorization is used or canceled");
        bytes32 structHash = keccak256(abi.encode(CANCEL_AUTHORIZATION_TYPEHASH, authorizer, nonce));
        checkSignature(authorizer, structHash, v, r, s);
        usedAuthorizations[authorizer][nonce] = true;
        emit AuthorizationCanceled(authorizer, nonce);
    }

    // ---- internals ----

    function buildDomainSeparator() private view returns (bytes32) {
        return keccak256(
            abi.encode(DOMAIN_TYPEHASH, keccak256(bytes(name)), keccak256(bytes(version)), block.chainid, address(this))
        );
    }

    function spendAuthorization(
        address authorizer,
        bytes32 nonce,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 structHash,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) private {
        require(block.timestamp > validAfter, "TestUSDC: authorization is not yet valid");
        require(block.timestamp < validBefore, "TestUSDC: authorization is expired");
        require(!usedAuthorizations[authorizer][nonce], "TestUSDC: authorization is used or canceled");
        checkSignature(authorizer, structHash, v, r, s);
        usedAuthorizations[authorizer][nonce] = true;
        emit AuthorizationUsed(authorizer, nonce);
    }

    /// @dev Requires that `authorizer` signed the EIP-712 digest of `structHash`. ecrecover
    /// answers the zero address for a malformed signature, which is refused explicitly.
    function checkSignature(address authorizer, bytes32 structHash, uint8 v, bytes32 r, bytes32 s) private view {
        require(uint256(s) <= HALF_CURVE_ORDER, "TestUSDC: invalid signature 's' value");
        require(v == 27 || v == 28, "TestUSDC: invalid signature 'v' value");
        bytes32 digest = keccak256(abi.encodePacked(hex"1901", DOMAIN_SEPARATOR(), structHash));
        address signer = ecrecover(digest, v, r, s);
        require(signer != address(0) && signer == authorizer, "TestUSDC: invalid signature");
    }

    function splitSignature(bytes memory signature) private pure returns (uint8 v, bytes32 r, bytes32 s) {
        require(signature.length == 65, "TestUSDC: signature must be 65 bytes");
        assembly {
            r := mload(add(signature, 32))
            s := mload(add(signature, 64))
            v := byte(0, mload(add(signature, 96)))
        }
    }

    function move(address from, address to, uint256 value) private {
        require(from != address(0), "TestUSDC: transfer from the zero address");
        require(to != address(0), "TestUSDC: transfer to the zero address");
        uint256 held = balanceOf[from];
        require(held >= value, "TestUSDC: transfer amount exceeds balance");
        unchecked {
            balanceOf[from] = held - value;
        }
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
